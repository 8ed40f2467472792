// Real clients we did not write, against a ctxsel the Go test started
// (server/clienttest_test.go): the official Cohere TypeScript SDK (v1 and v2
// rerank), LangChain.js's CohereRerank, the OpenAI SDK's embeddings and the
// official MCP TypeScript client over stdio. Run with `node --test` and
//   CTXSEL_URL  base URL of `ctxsel serve --embedder use-lite` (with API key CTXSEL_KEY)
//   CTXSEL_BIN  the ctxsel binary, CTXSEL_INDEX an index for `ctxsel mcp --index`
import { test } from "node:test";
import assert from "node:assert/strict";
import { CohereClient, CohereClientV2, CohereError } from "cohere-ai";
import { CohereRerank } from "@langchain/cohere";
import { Document } from "@langchain/core/documents";
import OpenAI from "openai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const url = process.env.CTXSEL_URL;
const key = process.env.CTXSEL_KEY;
const bin = process.env.CTXSEL_BIN;
const index = process.env.CTXSEL_INDEX;
assert.ok(url && key && bin && index, "CTXSEL_URL, CTXSEL_KEY, CTXSEL_BIN and CTXSEL_INDEX must be set (run via go test ./server -run TestRealClients)");

const query = "What is the capital of the United States?";
const documents = [
  "Carson City is the capital city of the American state of Nevada.",
  "The Commonwealth of the Northern Mariana Islands is a group of islands in the Pacific Ocean. Its capital is Saipan.",
  "Washington, D.C. (also known as simply Washington or D.C., and officially as the District of Columbia) is the capital of the United States. It is a federal district.",
  "Capitalization or capitalisation in English grammar is the use of a capital letter at the start of a word.",
  "Capital punishment has existed in the United States since before the United States was a country.",
  "Bananas are rich in potassium and grow in tropical climates.",
  "The offside rule in football was first codified in 1863.",
  "Photosynthesis converts light energy into chemical energy in plants.",
];
const DC = 2;

const cohere = new CohereClient({ token: key, environment: url });

function assertRankOrder(results) {
  for (let i = 1; i < results.length; i++) {
    assert.ok(results[i - 1].relevanceScore >= results[i].relevanceScore, `results not in rank order: ${JSON.stringify(results)}`);
  }
  assert.equal(new Set(results.map((r) => r.index)).size, results.length, "an index returned twice");
}

test("Cohere SDK v1: ctxsel-full ranks every document, the answer first", async () => {
  const res = await cohere.rerank({ model: "ctxsel-full", query, documents });
  assert.equal(res.results.length, documents.length);
  assert.equal(res.results[0].index, DC);
  assertRankOrder(res.results);
});

test("Cohere SDK v1: topN caps a fixed top-k, documents come back on request", async () => {
  const res = await cohere.rerank({ model: "ctxsel-topk", query, documents, topN: 2, returnDocuments: true });
  assert.equal(res.results.length, 2);
  assert.equal(res.results[0].index, DC);
  assertRankOrder(res.results);
  for (const r of res.results) assert.equal(r.document.text, documents[r.index]);
  // ctxsel's extension object reaches the caller through the SDK.
  assert.equal(res.ctxsel.k, 2);
  assert.equal(res.ctxsel.n, documents.length);
  assert.match(res.ctxsel.reason, /\S/);
});

test("Cohere SDK v1: adaptive-k returns only a top prefix, fewer than were sent", async () => {
  const full = await cohere.rerank({ model: "ctxsel-full", query, documents });
  const res = await cohere.rerank({ model: "ctxsel-adaptivek:buffer=0", query, documents, returnDocuments: false });
  assert.ok(res.results.length >= 1 && res.results.length < documents.length, `kept ${res.results.length} of ${documents.length}`);
  assert.deepEqual(res.results.map((r) => r.index), full.results.slice(0, res.results.length).map((r) => r.index));
  assert.equal(res.ctxsel.k, res.results.length);
  assert.equal(res.results.some((r) => r.document !== undefined), false, "documents returned unasked");
});

test("Cohere SDK v2: /v2/rerank with topN", async () => {
  const v2 = new CohereClientV2({ token: key, environment: url });
  const res = await v2.rerank({ model: "ctxsel-topk", query, documents, topN: 3 });
  const v1 = await cohere.rerank({ model: "ctxsel-topk", query, documents, topN: 3 });
  assert.equal(res.results.length, 3);
  assert.deepEqual(res.results.map((r) => r.index), v1.results.map((r) => r.index));
  assert.equal(res.meta.apiVersion.version, "2");
});

// checkEvidence: each result's evidence (ctxsel's extension, asked for with
// return_evidence) marks sentences of its own document by UTF-8 byte
// offsets, and the pruned texts' tokens are the response's.
function checkEvidence(res) {
  let tokens = 0;
  for (const r of res.results) {
    const ev = r.evidence;
    assert.ok(ev && Array.isArray(ev.spans) && ev.spans.length > 0, `result ${r.index} has no evidence: ${JSON.stringify(r)}`);
    const doc = Buffer.from(documents[r.index], "utf8");
    for (const [a, b] of ev.spans) {
      assert.ok(a >= 0 && a < b && b <= doc.length, `span ${a},${b} outside document ${r.index}`);
      assert.ok(ev.text.includes(doc.subarray(a, b).toString("utf8").trim()), `kept bytes of document ${r.index} not in ${ev.text}`);
    }
    assert.ok(ev.tokens <= ev.passage_tokens && typeof ev.why === "string");
    tokens += ev.tokens;
  }
  assert.equal(res.ctxsel.tokens, tokens);
}

test("Cohere SDK v1: return_evidence passes through the SDK; each document's kept sentences come back", async () => {
  const res = await cohere.rerank({ model: "ctxsel-evidence:budget=60", query, documents, return_evidence: true, returnDocuments: true });
  assert.ok(res.results.length >= 1 && res.results.length < documents.length, `kept ${res.results.length}`);
  assertRankOrder(res.results);
  assert.ok(res.results.some((r) => r.index === DC), "the answer's document is not among those kept");
  for (const r of res.results) assert.equal(r.document.text, documents[r.index]);
  checkEvidence(res);
  // A strategy's documents, pruned: evidence_budget composes the two.
  const pruned = await cohere.rerank({ model: "ctxsel-topk:k=3", query, documents, evidence_budget: 40, return_evidence: true });
  assert.ok(pruned.results.length >= 1 && pruned.results.length <= 3);
  checkEvidence(pruned);
});

test("Cohere SDK v2 and LangChain.js: an evidence model works for clients that do not ask for the evidence", async () => {
  const v2 = new CohereClientV2({ token: key, environment: url });
  const res = await v2.rerank({ model: "ctxsel-evidence:budget=60", query, documents, topN: 3 });
  assert.ok(res.results.length >= 1 && res.results.length <= 3);
  assertRankOrder(res.results);
  assert.equal(res.results.some((r) => r.evidence !== undefined), false, "evidence returned unasked");
  const reranker = new CohereRerank({ model: "ctxsel-evidence:budget=60", topN: documents.length, client: cohere });
  const docs = documents.map((text, i) => new Document({ pageContent: text, metadata: { source: `doc${i}` } }));
  const kept = await reranker.compressDocuments(docs, query);
  assert.ok(kept.length >= 1 && kept.length < documents.length, `kept ${kept.length}`);
  for (const d of kept) assert.equal(typeof d.metadata.relevanceScore, "number");
});

test("Cohere SDK: a bad strategy is a 400 naming the field; a wrong key a 401", async () => {
  await assert.rejects(cohere.rerank({ model: "ctxsel-nope", query, documents }), (err) => {
    assert.ok(err instanceof CohereError);
    assert.equal(err.statusCode, 400);
    assert.equal(err.body.error.field, "model");
    return true;
  });
  const wrong = new CohereClient({ token: "not-the-key", environment: url });
  await assert.rejects(wrong.rerank({ model: "ctxsel-full", query, documents }), (err) => {
    assert.equal(err.statusCode, 401);
    return true;
  });
});

test("LangChain.js CohereRerank: compressDocuments keeps the selected documents", async () => {
  const reranker = new CohereRerank({ model: "ctxsel-topk", topN: 2, client: cohere });
  const docs = documents.map((text, i) => new Document({ pageContent: text, metadata: { source: `doc${i}` } }));
  const kept = await reranker.compressDocuments(docs, query);
  assert.equal(kept.length, 2);
  assert.equal(kept[0].pageContent, documents[DC]);
  assert.equal(kept[0].metadata.source, `doc${DC}`);
  assert.equal(typeof kept[0].metadata.relevanceScore, "number");
  assert.ok(kept[0].metadata.relevanceScore >= kept[1].metadata.relevanceScore);

  const adaptive = new CohereRerank({ model: "ctxsel-adaptivek:buffer=0", topN: documents.length, client: cohere });
  const ranked = await adaptive.rerank(documents, query);
  assert.ok(ranked.length >= 1 && ranked.length < documents.length, `kept ${ranked.length}`);
  assert.equal(ranked[0].index, DC);
});

test("OpenAI SDK: /v1/embeddings serves 512-d use-lite vectors", async () => {
  const openai = new OpenAI({ apiKey: key, baseURL: `${url}/v1` });
  const res = await openai.embeddings.create({ model: "use-lite", input: ["The cat sat on the mat.", "A kitten sat on a rug.", "Stock markets fell sharply."] });
  assert.equal(res.data.length, 3);
  for (const d of res.data) assert.equal(d.embedding.length, 512);
  const cos = (a, b) => {
    let dot = 0, na = 0, nb = 0;
    for (let i = 0; i < a.length; i++) { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
    return dot / Math.sqrt(na * nb);
  };
  const [cat, kitten, stocks] = res.data.map((d) => d.embedding);
  assert.ok(cos(cat, kitten) > cos(cat, stocks), "similar sentences should be closer");
  const floats = await openai.embeddings.create({ model: "use-lite", input: "The cat sat on the mat.", encoding_format: "float" });
  assert.ok(Math.abs(cos(floats.data[0].embedding, cat) - 1) < 1e-6, "float and base64 encodings differ");
});

test("OpenAI SDK: errors carry OpenAI's type, param and code, the message naming the field", async () => {
  const openai = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
  await assert.rejects(openai.embeddings.create({ model: "use-lite", input: ["The cat sat.", ""] }), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.status, 400);
    assert.equal(err.param, "input[1]");
    assert.equal(err.type, "invalid_request_error");
    assert.match(err.message, /^400 input\[1\]: empty string/);
    return true;
  });
  await assert.rejects(openai.embeddings.create({ model: "use-lite", input: "x", dimensions: 1024 }), (err) => {
    assert.equal(err.param, "dimensions");
    assert.match(err.message, /dimensions: 1024: this model's vectors have 512 dimensions/);
    return true;
  });
  const wrong = new OpenAI({ apiKey: "not-the-key", baseURL: `${url}/v1`, maxRetries: 0 });
  await assert.rejects(wrong.embeddings.create({ model: "use-lite", input: "x" }), (err) => {
    assert.ok(err instanceof OpenAI.AuthenticationError);
    assert.equal(err.code, "invalid_api_key");
    assert.match(err.message, /missing or invalid API key/);
    return true;
  });
  await assert.rejects(openai.models.retrieve("nope"), (err) => {
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal(err.code, "model_not_found");
    return true;
  });
  // The list names every rerank model, the evidence selector's with its budget.
  const ids = [];
  for await (const m of openai.models.list()) ids.push(m.id);
  assert.ok(ids.includes("use-lite") && ids.includes("ctxsel-adaptivek") && ids.includes("ctxsel-evidence:budget=1500"), ids.join(" "));
});

test("Cohere SDK v2: a document over max_tokens_per_doc is truncated and meta.warnings says so", async () => {
  const v2 = new CohereClientV2({ token: key, environment: url });
  const long = "Washington is the capital of the United States. ".repeat(2000); // ~98 KB, over max_text_bytes before the cut
  const res = await v2.rerank({ model: "ctxsel-full", query, documents: [documents[0], long] });
  assert.equal(res.results.length, 2);
  assert.equal(res.results[0].index, 1);
  assert.match(res.meta.warnings[0], /truncated to max_tokens_per_doc \(4096 tokens\) before ranking: document 1/);
  const short = await v2.rerank({ model: "ctxsel-full", query, documents: [documents[0], long], maxTokensPerDoc: 5 });
  assert.match(short.meta.warnings[0], /\(5 tokens\)/);
});

test("MCP TypeScript client over stdio: every tool of ctxsel mcp", async () => {
  const transport = new StdioClientTransport({ command: bin, args: ["mcp", "--index", index, "--embedder", "use-lite"], env: { ...process.env }, stderr: "inherit" });
  const client = new Client({ name: "ctxsel-clienttest", version: "1.0.0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["ask", "search", "select_context", "strategies"]);
    for (const t of tools) assert.equal(t.inputSchema.type, "object");

    const sel = await client.callTool({ name: "select_context", arguments: {
      query, strategy: "topk:k=2", candidates: documents.map((text, i) => ({ id: `d${i}`, text })) } });
    assert.ok(!sel.isError, JSON.stringify(sel));
    const selected = JSON.parse(sel.content[0].text);
    assert.equal(selected.ids.length, 2);
    assert.equal(selected.ids[0], `d${DC}`);
    assert.deepEqual(sel.structuredContent.ids, selected.ids);
    assert.match(selected.explanation.reason, /\S/);

    const search = await client.callTool({ name: "search", arguments: { query: "Which river flows through Paris?", top_n: 2 } });
    assert.ok(!search.isError, JSON.stringify(search));
    const passages = JSON.parse(search.content[0].text).passages;
    assert.equal(passages.length, 2);
    assert.match(passages[0].text, /Seine/);

    const ask = await client.callTool({ name: "ask", arguments: { query: "Which river flows through Paris?", strategy: "topk:k=1" } });
    assert.ok(!ask.isError, JSON.stringify(ask));
    const answer = JSON.parse(ask.content[0].text);
    assert.equal(answer.ids.length, 1);
    assert.match(answer.passages.find((p) => p.id === answer.ids[0]).text, /Seine/);

    const strategies = await client.callTool({ name: "strategies", arguments: {} });
    const catalogue = JSON.parse(strategies.content[0].text);
    assert.ok(catalogue.strategies.some((s) => s.name === "adaptivek"));

    const bad = await client.callTool({ name: "select_context", arguments: { candidates: [{ id: "a", score: 1 }], strategy: "nope" } });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /unknown strategy/);
    const path = await client.callTool({ name: "search", arguments: { query: "x", index: "/etc" } });
    assert.equal(path.isError, true, "a tool accepted a path argument");
  } finally {
    await client.close();
  }
});
