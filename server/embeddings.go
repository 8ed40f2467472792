package server

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/embed"
)

// /v1/embeddings is OpenAI's embeddings API over the server's embedder (the
// offline USE-Lite model, or the remote one serve was started with), so an
// OpenAI client can use the offline model through ctxsel.

// maxEmbedInputs bounds the texts of one request (OpenAI's own limit).
const maxEmbedInputs = 2048

type embeddingsRequest struct {
	inputs     []string
	model      string
	format     string // "float" (default) or "base64"
	dimensions int
	seen       uint16
}

func decodeEmbeddings(body string, r *embeddingsRequest, lim limits) error {
	d := decoder{s: body}
	maxInputs := min(maxEmbedInputs, lim.maxCandidates)
	err := d.object(func(key string) error {
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
		default:
			return badField(key, "unknown field (known: input, model, encoding_format, dimensions, user)")
		}
		read, err := d.given(&r.seen, bit, key)
		if !read {
			return err
		}
		p := top(key)
		switch key {
		case "input":
			d.ws()
			switch d.peek() {
			case '"':
				var s string
				s, err = d.text(fpath{name: "input", idx: 0}, lim)
				r.inputs = append(r.inputs, s)
			case '[':
				err = d.embedInputs(r, maxInputs, lim)
			default:
				err = d.typeErr(p, "a string or an array of strings")
			}
		case "model":
			r.model, err = d.str(p)
		case "encoding_format":
			r.format, err = d.str(p)
			if err == nil && r.format != "float" && r.format != "base64" {
				err = badField(key, "%q: want float or base64", r.format)
			}
		case "dimensions":
			r.dimensions, err = d.count(p)
		case "user":
			_, err = d.str(p)
		}
		return err
	})
	if err != nil {
		return err
	}
	if r.seen&1 == 0 || len(r.inputs) == 0 {
		return badField("input", "missing: give a string or an array of strings")
	}
	for i, s := range r.inputs {
		if s == "" {
			return badField(fmt.Sprintf("input[%d]", i), "empty string")
		}
	}
	return nil
}

func (d *decoder) embedInputs(r *embeddingsRequest, maxInputs int, lim limits) error {
	p := top("input")
	if err := d.beginArray(p); err != nil {
		return err
	}
	for first := true; ; {
		ok, err := d.nextElem(p, &first)
		if err != nil || !ok {
			return err
		}
		ep := fpath{name: "input", idx: len(r.inputs)}
		if len(r.inputs) == maxInputs {
			return &fieldError{Status: 413, Field: "input", Msg: fmt.Sprintf("more than %d inputs", maxInputs)}
		}
		if d.peek() != '"' {
			// Token arrays (OpenAI accepts them) mean nothing to a model
			// with its own tokenizer.
			return d.typeErr(ep, "a string (token arrays are not accepted)")
		}
		s, err := d.text(ep, lim)
		if err != nil {
			return err
		}
		r.inputs = append(r.inputs, s)
	}
}

// embedModelNames are the names a request may give for the server's
// embedder: its full ModelID and its name (embed.ModelName: the relayed
// model's own, e.g. "text-embedding-3-small", or "use-lite"), which is the
// one responses report: a remote embedder's ModelID names its server.
func embedModelNames(e embed.Embedder) (full, short string) {
	return e.ModelID(), embed.ModelName(e)
}

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	var req embeddingsRequest
	if err := decodeEmbeddings(body, &req, s.limits()); err != nil {
		s.writeFailure(w, r, err)
		return
	}
	if s.embedder == nil {
		writeError(w, http.StatusNotImplemented, "", "this server has no embedder configured (ctxsel serve --embedder use-lite)")
		return
	}
	full, short := embedModelNames(s.embedder)
	if m := strings.TrimSpace(req.model); m != "" && m != full && m != short {
		s.writeFailure(w, r, badField("model", "%q is not served here (this server embeds with %q)", m, short))
		return
	}
	texts := make([]string, len(req.inputs))
	for i, t := range req.inputs {
		texts[i] = strings.Clone(t) // embedders may cache what they are given
	}
	vecs, err := s.embedder.Embed(r.Context(), texts)
	dim := 0
	if err == nil {
		dim, err = embed.CheckVectors(vecs, len(texts))
	}
	if err != nil {
		s.writeFailure(w, r, embedFailure(err))
		return
	}
	if req.dimensions != 0 && req.dimensions != dim {
		s.writeFailure(w, r, badField("dimensions", "%d: this model's vectors have %d dimensions", req.dimensions, dim))
		return
	}
	tokens := 0
	if counter, err := s.tokenCounter(); err == nil {
		for _, t := range texts {
			tokens += counter.Count(t)
		}
	}
	bp := getBuf()
	defer putBuf(bp)
	b := append((*bp)[:0], `{"object":"list","data":[`...)
	var raw []byte
	for i, v := range vecs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = appendInt(b, i)
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
			b = append(b, '[')
			for j, x := range v {
				if j > 0 {
					b = append(b, ',')
				}
				// Shortest float32 form: the float64 one of a float32
				// carries up to 17 meaningless digits.
				b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = appendString(b, short)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = appendInt(b, tokens)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, tokens)
	b = append(b, "}}\n"...)
	*bp = b
	writeJSON(w, http.StatusOK, b)
}
