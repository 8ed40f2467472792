package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// freshServeEmbeds: `ctxsel serve` with no flags answers /v1/embeddings,
// /v1/select with texts and /v1/rerank with dense scoring (the offline
// model, opened on first use), and /v1/models names the model.
func freshServeEmbeds(t *testing.T, bin string) {
	p := startServe(t, bin, []string{"CTXSEL_EMBED_CACHE=off"})
	defer p.stop(t)
	post := func(path, body string, into any) {
		t.Helper()
		res, err := http.Post(p.url+strings.TrimPrefix(path, "/"), "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		if err := json.NewDecoder(res.Body).Decode(into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if !strings.Contains(p.logs(), "embedder=use-lite") {
		t.Errorf("the start line does not name the embedder:\n%s", p.logs())
	}
	res, err := http.Get(p.url + "v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct {
			ID     string
			Ctxsel struct{ Kind string }
		}
	}
	_ = json.NewDecoder(res.Body).Decode(&models)
	res.Body.Close()
	if len(models.Data) == 0 || models.Data[0].ID != "use-lite" || models.Data[0].Ctxsel.Kind != "embedding" {
		t.Errorf("/v1/models: %+v", models)
	}

	var emb struct {
		Model string
		Data  []struct{ Embedding []float64 }
	}
	post("/v1/embeddings", `{"input":["The cat sat on the mat."],"model":"use-lite"}`, &emb)
	if emb.Model != "use-lite" || len(emb.Data) != 1 || len(emb.Data[0].Embedding) != 512 {
		t.Errorf("/v1/embeddings: model %q, %d vectors", emb.Model, len(emb.Data))
	}
	var sel struct{ IDs []string }
	post("/v1/select", `{"query":"Which river flows through Paris?","strategy":"topk:k=1","candidates":[
		{"id":"tokyo","text":"Tokyo is the capital of Japan."},{"id":"seine","text":"The Seine flows through Paris."}]}`, &sel)
	if len(sel.IDs) != 1 || sel.IDs[0] != "seine" {
		t.Errorf("/v1/select with texts: %v", sel.IDs)
	}
	var rr struct {
		Results []struct{ Index int }
		Ctxsel  struct{ Scoring string }
	}
	post("/v1/rerank", `{"query":"Which river flows through Paris?","top_n":1,"documents":["Tokyo is the capital of Japan.","The Seine flows through Paris."]}`, &rr)
	if rr.Ctxsel.Scoring != "dense" || len(rr.Results) != 1 || rr.Results[0].Index != 1 {
		t.Errorf("/v1/rerank: %+v", rr)
	}
}
