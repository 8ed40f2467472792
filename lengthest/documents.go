package lengthest

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/ctxsel/ctxsel/chunk"
)

// DefaultDocTokens is the length each retrieved document is cut to (App. A.2.2).
const DefaultDocTokens = 1024

// Tokenizer counts and cuts text in the tokens budgets are measured in.
// *token.Tiktoken implements it.
type Tokenizer = chunk.Tokenizer

// TruncateSentences returns the longest prefix of text that ends at a
// sentence boundary (chunk.SplitSentences) and has at most maxTokens
// tokens. When even the first sentence is longer, the text is cut at the
// token limit instead, so that no document is dropped for a long opening —
// a deliberate difference from the official code (retriever_utils.
// segment_docs), which leaves such a document empty. The official code also
// splits sentences with NLTK and rejoins them with single spaces; here the
// prefix is the document's own text.
func TruncateSentences(tok Tokenizer, text string, maxTokens int) (string, error) {
	if maxTokens <= 0 {
		return "", nil
	}
	ids, err := tok.Encode(text)
	if err != nil {
		return "", fmt.Errorf("tokenize: %w", err)
	}
	if len(ids) <= maxTokens {
		return text, nil
	}
	head, err := tok.Decode(ids[:maxTokens])
	if err != nil {
		return "", fmt.Errorf("detokenize: %w", err)
	}
	sents := chunk.SplitSentences(text)
	fits := func(i int) bool { return tok.Count(text[:sents[i][1]]) <= maxTokens }
	// start from the last sentence ending inside the first maxTokens
	// tokens, then settle on the longest prefix that fits: usually one or
	// two counts instead of a search over the whole document
	i := sort.Search(len(sents), func(i int) bool { return sents[i][1] > len(head) }) - 1
	for i >= 0 && !fits(i) {
		i--
	}
	for i+1 < len(sents) && fits(i+1) {
		i++
	}
	if i >= 0 {
		return text[:sents[i][1]], nil
	}
	return cutTokens(tok, text, maxTokens)
}

// cutTokens keeps the first n tokens of text.
func cutTokens(tok Tokenizer, text string, n int) (string, error) {
	ids, err := tok.Encode(text)
	if err != nil {
		return "", fmt.Errorf("tokenize: %w", err)
	}
	if len(ids) <= n {
		return text, nil
	}
	out, err := tok.Decode(ids[:n])
	if err != nil {
		return "", fmt.Errorf("detokenize: %w", err)
	}
	// a cut inside a multi-byte character can decode one token longer
	for n > 0 && tok.Count(out) > len(ids[:n]) {
		n--
		if out, err = tok.Decode(ids[:n]); err != nil {
			return "", fmt.Errorf("detokenize: %w", err)
		}
	}
	return out, nil
}

// Pack chooses the documents a budget admits (App. A.2): documents in
// descending score order (ties: original order) are added while they fit,
// stopping at the first that does not; tokens holds the already truncated
// texts' token counts. The chosen indices come back in original document
// order, with their total tokens.
func Pack(scores []float64, tokens []int, budget int) (chosen []int, total int) {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	for _, i := range order {
		if total+tokens[i] > budget {
			break
		}
		total += tokens[i]
		chosen = append(chosen, i)
	}
	slices.Sort(chosen)
	return chosen, total
}

// FitWindow cuts documents so that their tokens sum to at most limit,
// truncating the longest documents first (App. A.2.1): every document
// longer than a common cap L is cut to L tokens, with L the largest cap that
// fits. Documents shorter than L are untouched. It returns the texts (the
// originals where uncut) and their token counts.
func FitWindow(tok Tokenizer, docs []string, limit int) ([]string, []int, error) {
	n := make([]int, len(docs))
	sum := 0
	for i, d := range docs {
		n[i] = tok.Count(d)
		sum += n[i]
	}
	out := slices.Clone(docs)
	if sum <= limit {
		return out, n, nil
	}
	limit = max(limit, 0)
	// water-filling: the largest L with sum(min(n_i, L)) <= limit
	lens := slices.Sorted(slices.Values(n))
	capL, used := 0, 0
	for k, l := range lens {
		rest := len(lens) - k // documents at least this long
		if used+l*rest > limit {
			capL = (limit - used) / rest
			break
		}
		used += l
		capL = l
	}
	for i := range out {
		if n[i] > capL {
			cut, err := cutTokens(tok, docs[i], capL)
			if err != nil {
				return nil, nil, err
			}
			out[i], n[i] = cut, tok.Count(cut)
		}
	}
	return out, n, nil
}
