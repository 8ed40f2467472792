// Command simllm serves a scripted OpenAI-compatible endpoint for plumbing
// runs of the picker and of mining on a labelled JSONL file:
//
//	go run ./picker/pickertest/simllm --data FILE --mode reader|picker|garbage
//
// reader: the simulated reader of llm/llmtest (answers a question iff every
// gold passage text is in the prompt); picker: a picker that returns the
// gold ids among those offered (the first offered id when none is);
// garbage: text that is no picker output. It prints the endpoint spec
// (openai:sim@http://...) and serves until interrupted. Its figures check
// plumbing only: no model is involved.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/picker/pickertest"
)

func main() {
	data := flag.String("data", "", "labelled JSONL file")
	mode := flag.String("mode", "reader", "reader, picker or garbage")
	flag.Parse()
	var recs []dataset.Record
	if *data != "" {
		var err error
		if recs, err = dataset.LoadFile(*data); err != nil {
			log.Fatal(err)
		}
	}
	var reply llmtest.Replier
	switch *mode {
	case "reader":
		var table []llmtest.Question
		for _, r := range recs {
			q := llmtest.Question{Question: r.Question}
			if len(r.Answers) > 0 {
				q.Answer = r.Answers[0]
			}
			for _, p := range r.Passages {
				if p.Gold {
					q.Gold = append(q.Gold, p.Text)
				}
			}
			table = append(table, q)
		}
		reply = llmtest.Reader(table, llmtest.ReaderOptions{})
	case "picker":
		gold := map[string][]string{}
		for _, r := range recs {
			for _, p := range r.Passages {
				if p.Gold {
					gold[r.Question] = append(gold[r.Question], p.ID)
				}
			}
		}
		reply = pickertest.Gold(gold)
	case "garbage":
		reply = pickertest.Garbage
	default:
		log.Fatalf("mode %q: want reader, picker or garbage", *mode)
	}
	srv := llmtest.New(reply)
	defer srv.Close()
	fmt.Println(srv.OpenAISpec("sim"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	<-ctx.Done()
}
