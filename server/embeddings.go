package server

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// /v1/embeddings is OpenAI's embeddings API over the server's embedder (the
// offline USE-Lite model, or the remote one serve was started with), so an
// OpenAI client can use the offline model through ctxsel. It also takes
// the fields of Jina's embeddings API, with this behaviour:
//
//   - input items may be {"text": "..."} objects (Jina's multimodal form,
//     which LlamaIndex's JinaAIEmbedding always sends); an image
//     ({"image"}, {"url"}, {"bytes"}) is refused: the model reads text;
//   - task: "retrieval.query" and "code.query" embed the inputs as search
//     queries (embed.Queries: the query prefix of an embedder that has
//     one; for use-lite the same vectors), every other Jina task
//     ("retrieval.passage", "code.passage", "text-matching",
//     "classification", "separation") as passages, which is also what no
//     task means; an unknown task is refused, naming the known ones;
//   - normalized: true returns unit-length vectors (use-lite's already
//     are; a remote embedder's are scaled here), false or absent returns
//     them as the embedder does;
//   - late_chunking: false is accepted; true is refused, since the served
//     model embeds each input on its own and cannot see the others;
//   - embedding_type (and encoding_type, which LlamaIndex's Jina client
//     sends) is encoding_format under another name: "float" or "base64";
//     the binary kinds ("binary", "ubinary", "int8", "uint8") are refused.
//     Two of the three naming different formats are refused.

// maxEmbedInputs bounds the texts of one request (OpenAI's own limit).
const maxEmbedInputs = 2048

type embeddingsRequest struct {
	inputs     []string
	model      string
	format     string // "float" (default) or "base64"
	formatFrom string // the field that set format
	dimensions int
	query      bool // embed the inputs as queries (task)
	normalize  bool
	seen       uint16
}

// jinaTasks are Jina's embedding tasks; true marks those that embed
// queries.
var jinaTasks = map[string]bool{
	"retrieval.query": true, "code.query": true,
	"retrieval.passage": false, "code.passage": false, "text-matching": false, "classification": false, "separation": false,
}

const embedFieldsKnown = "input, model, encoding_format, dimensions, user; Jina's task, normalized, late_chunking, embedding_type (or encoding_type)"

func decodeEmbeddings(body string, r *embeddingsRequest, lim limits) error {
	d := newDecoder(body)
	maxInputs := min(maxEmbedInputs, lim.MaxCandidates)
	err := d.Object(func(key string) error {
		var bit uint16
		switch key {
		case "input":
			bit = 1
		case "model":
			bit = 2
		case "encoding_format":
			bit = 4
		case "dimensions":
			bit = 8
		case "user":
			bit = 16
		case "task":
			bit = 32
		case "normalized":
			bit = 64
		case "late_chunking":
			bit = 128
		case "embedding_type":
			bit = 256
		case "encoding_type":
			bit = 512
		default:
			return wire.Bad(key, "unknown field (known: %s)", embedFieldsKnown)
		}
		read, err := d.Given(&r.seen, bit, key)
		if !read {
			return err
		}
		p := wire.Field(key)
		switch key {
		case "input":
			d.Space()
			switch d.Peek() {
			case '"':
				var s string
				s, err = d.Text(wire.Path{Name: "input", Idx: 0}, lim.Limits)
				r.inputs = append(r.inputs, s)
			case '[':
				err = d.embedInputs(r, maxInputs, lim)
			default:
				err = d.TypeErr(p, "a string or an array of strings")
			}
		case "model":
			r.model, err = d.Str(p)
		case "encoding_format", "embedding_type", "encoding_type":
			var f string
			if f, err = d.Str(p); err == nil {
				err = r.setFormat(key, f)
			}
		case "dimensions":
			r.dimensions, err = d.Count(p)
		case "user":
			_, err = d.Str(p)
		case "task":
			var task string
			if task, err = d.Str(p); err == nil {
				q, ok := jinaTasks[task]
				if !ok {
					return wire.Bad(key, "unknown task %q (known: retrieval.query, retrieval.passage, code.query, code.passage, text-matching, classification, separation)", task)
				}
				r.query = q
			}
		case "normalized":
			r.normalize, err = d.Bool(p)
		case "late_chunking":
			var late bool
			if late, err = d.Bool(p); err == nil && late {
				err = wire.Bad(key, "late chunking is not available: the served model embeds each input on its own, without the others as context; send false or leave it out")
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if r.seen&1 == 0 || len(r.inputs) == 0 {
		return wire.Bad("input", "missing: give a string or an array of strings")
	}
	for i, s := range r.inputs {
		if s == "" {
			return wire.Bad(fmt.Sprintf("input[%d]", i), "empty string")
		}
	}
	return nil
}

// setFormat sets the vectors' encoding from one of the three fields that
// name it.
func (r *embeddingsRequest) setFormat(field, f string) error {
	switch f {
	case "float", "base64":
	case "binary", "ubinary", "int8", "uint8":
		return wire.Bad(field, "%q: binary embeddings are not served; want float or base64", f)
	default:
		return wire.Bad(field, "%q: want float or base64", f)
	}
	if r.formatFrom != "" && r.format != f {
		return wire.Bad(field, "%q, but %s asks for %q: give one", f, r.formatFrom, r.format)
	}
	r.format, r.formatFrom = f, field
	return nil
}

func (d *decoder) embedInputs(r *embeddingsRequest, maxInputs int, lim limits) error {
	return d.Array(wire.Field("input"), func(int) error {
		ep := wire.Path{Name: "input", Idx: len(r.inputs)}
		if len(r.inputs) == maxInputs {
			return wire.MoreThan(wire.Field("input"), maxInputs, "inputs")
		}
		var s string
		var err error
		switch d.Peek() {
		case '"':
			s, err = d.Text(ep, lim.Limits)
		case '{':
			s, err = d.embedInputObject(ep, lim)
		default:
			// Token arrays (OpenAI accepts them) mean nothing to a model
			// with its own tokenizer.
			err = d.TypeErr(ep, "a string or {\"text\": ...} (token arrays are not accepted)")
		}
		if err != nil {
			return err
		}
		r.inputs = append(r.inputs, s)
		return nil
	})
}

// embedInputObject reads Jina's {"text": "..."}; an image is refused.
func (d *decoder) embedInputObject(p wire.Path, lim limits) (string, error) {
	if err := d.BeginObject(p); err != nil {
		return "", err
	}
	text, has := "", false
	for first := true; ; {
		key, ok, err := d.NextKey(p, &first)
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
		kp := wire.Path{Name: p.Name, Idx: p.Idx, Sub: key}
		switch key {
		case "text":
			if has {
				return "", wire.Bad(kp.String(), "given twice")
			}
			if text, err = d.Text(kp, lim.Limits); err != nil {
				return "", err
			}
			has = true
		case "image", "url", "bytes":
			return "", wire.Bad(kp.String(), "images are not embedded: the served model reads text; send {\"text\": ...}")
		default:
			return "", wire.Bad(kp.String(), "unknown field (an input object is {\"text\": ...})")
		}
	}
	if !has {
		return "", wire.Bad(p.String(), "no \"text\": an input object is {\"text\": ...}")
	}
	return text, nil
}

// embeddingsOp decodes a /v1/embeddings body, embeds its inputs and
// appends the response.
func (s *Server) embeddingsOp(ctx context.Context, body string, b []byte) ([]byte, error) {
	var req embeddingsRequest
	if err := decodeEmbeddings(body, &req, s.limits()); err != nil {
		return nil, err
	}
	if s.embedder == nil {
		return nil, &wire.FieldError{Status: http.StatusNotImplemented, Path: wire.Field(""), Msg: noEmbedderMsg}
	}
	if err := s.checkEmbedModel(req.model); err != nil {
		return nil, err
	}
	short := embed.ModelName(s.embedder)
	texts := make([]string, len(req.inputs))
	for i, t := range req.inputs {
		texts[i] = strings.Clone(t) // embedders may cache what they are given
	}
	var vecs [][]float32
	var err error
	if req.query {
		vecs, err = embed.Queries(ctx, s.embedder, texts)
	} else {
		vecs, err = s.embedder.Embed(ctx, texts)
	}
	dim := 0
	if err == nil {
		dim, err = embed.CheckVectors(vecs, len(texts))
	}
	if err != nil {
		return nil, embedFailure(err)
	}
	if req.normalize {
		for _, v := range vecs {
			unitInPlace(v)
		}
	}
	if req.dimensions != 0 && req.dimensions != dim {
		return nil, wire.Bad("dimensions", "%d: this model's vectors have %d dimensions", req.dimensions, dim)
	}
	tokens := 0
	if counter, err := s.tokenCounter(); err == nil {
		for _, t := range texts {
			tokens += counter.Count(t)
		}
	}
	b = append(b, `{"object":"list","data":`...)
	var raw []byte
	b = wire.AppendArray(b, len(vecs), func(b []byte, i int) []byte {
		v := vecs[i]
		b = append(b, `{"object":"embedding","index":`...)
		b = wire.AppendInt(b, i)
		b = append(b, `,"embedding":`...)
		if req.format == "base64" {
			// Little-endian float32s, as OpenAI sends them.
			raw = raw[:0]
			for _, x := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			// Shortest float32 form: the float64 one of a float32 carries
			// up to 17 meaningless digits.
			b = wire.AppendArray(b, len(v), func(b []byte, j int) []byte { return strconv.AppendFloat(b, float64(v[j]), 'g', -1, 32) })
		}
		return append(b, '}')
	})
	b = append(b, `,"model":`...)
	b = wire.AppendString(b, short)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = wire.AppendInt(b, tokens)
	b = append(b, `,"total_tokens":`...)
	b = wire.AppendInt(b, tokens)
	return append(b, "}}\n"...), nil
}

// noEmbedderMsg is what a request that needs embedding is told by a server
// started without an embedder.
const noEmbedderMsg = "this server has no embedder: it was started with --embedder none (ctxsel serve embeds with use-lite unless told otherwise)"

// unitInPlace scales v to unit length (Jina's normalized); a zero vector
// stays zero.
func unitInPlace(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
}
