// Drop-in clients we did not write, beyond clients.test.mjs: the Vercel AI
// SDK (rerank() through @ai-sdk/cohere, embedMany() through @ai-sdk/openai),
// LlamaIndex TS (CohereRerank, OpenAIEmbedding, JinaAIEmbedding and
// JinaAIReranker), the MCP Inspector CLI over stdio and /mcp, and the MCP
// TypeScript SDK with an OAuth provider against /mcp without a key. The
// success path, and that each shows the user ctxsel's own error message.
//
// The server (server/clienttest_test.go) is `ctxsel serve --mcp
// --embedding-alias text-embedding-ada-002=use-lite` with no --embedder:
// use-lite is the default.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { rerank, embedMany } from "ai";
import { createCohere } from "@ai-sdk/cohere";
import { createOpenAI } from "@ai-sdk/openai";
import { CohereClient, CohereError } from "cohere-ai";
import { CohereRerank as LlamaCohereRerank } from "@llamaindex/cohere";
import { OpenAIEmbedding } from "@llamaindex/openai";
import { JinaAIEmbedding } from "@llamaindex/jinaai";
import { Document } from "@llamaindex/core/schema";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

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
];
const DC = 2;

const cos = (a, b) => {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  return dot / Math.sqrt(na * nb);
};

// --- Vercel AI SDK -------------------------------------------------------

test("Vercel rerank() with @ai-sdk/cohere: ranks through /v2/rerank, says how it scored", async () => {
  const cohere = createCohere({ apiKey: key, baseURL: `${url}/v2` });
  const res = await rerank({ model: cohere.reranking("ctxsel-topk"), query, documents, topN: 2 });
  assert.equal(res.ranking.length, 2);
  assert.equal(res.ranking[0].originalIndex, DC);
  assert.equal(res.rerankedDocuments[0], documents[DC]);
  assert.ok(res.ranking[0].score >= res.ranking[1].score);
  // The scoring, in the body's ctxsel extension and in a header.
  assert.equal(res.response.body.ctxsel.scoring, "dense");
  assert.equal(res.response.headers["x-ctxsel-scoring"], "dense");
  // Adaptive-k returns only a prefix of what was sent.
  const adaptive = await rerank({ model: cohere.reranking("ctxsel-adaptivek:buffer=0"), query, documents });
  assert.ok(adaptive.ranking.length >= 1 && adaptive.ranking.length < documents.length, `kept ${adaptive.ranking.length}`);
});

test("Vercel rerank(): the error the user sees is ctxsel's message", async () => {
  const cohere = createCohere({ apiKey: key, baseURL: `${url}/v2` });
  await assert.rejects(rerank({ model: cohere.reranking("ctxsel-nope"), query, documents, maxRetries: 0 }), (err) => {
    assert.match(err.message, /model: unknown strategy "nope"/);
    assert.equal(err.statusCode, 400);
    return true;
  });
  const wrong = createCohere({ apiKey: "not-the-key", baseURL: `${url}/v2` });
  await assert.rejects(rerank({ model: wrong.reranking("ctxsel-topk"), query, documents, maxRetries: 0 }), (err) => {
    assert.match(err.message, /missing or invalid API key/);
    return true;
  });
});

test("Vercel embedMany() with @ai-sdk/openai: use-lite vectors; an unserved model's 400 names the fix", async () => {
  const openai = createOpenAI({ apiKey: key, baseURL: `${url}/v1` });
  const values = ["The cat sat on the mat.", "A kitten sat on a rug.", "Stock markets fell sharply."];
  const { embeddings } = await embedMany({ model: openai.embedding("use-lite"), values });
  assert.equal(embeddings.length, 3);
  for (const e of embeddings) assert.equal(e.length, 512);
  assert.ok(cos(embeddings[0], embeddings[1]) > cos(embeddings[0], embeddings[2]));
  // The alias the server was started with.
  const aliased = await embedMany({ model: openai.embedding("text-embedding-ada-002"), values: values.slice(0, 1) });
  assert.ok(Math.abs(cos(aliased.embeddings[0], embeddings[0]) - 1) < 1e-6);
  await assert.rejects(embedMany({ model: openai.embedding("text-embedding-3-small"), values, maxRetries: 0 }), (err) => {
    assert.match(err.message, /this server embeds with "use-lite"/);
    assert.match(err.message, /--embedding-alias text-embedding-3-small=use-lite/);
    return true;
  });
  await assert.rejects(embedMany({ model: openai.embedding("use-lite"), values: ["ok", ""], maxRetries: 0 }), (err) => {
    assert.match(err.message, /^input\[1\]: empty string/);
    assert.equal(err.statusCode, 400);
    return true;
  });
});

// --- Cohere SDK: wire-shaped errors --------------------------------------

test("Cohere SDK: errors carry a top-level message; an image document is refused", async () => {
  const cohere = new CohereClient({ token: key, environment: url });
  await assert.rejects(cohere.rerank({ query, documents: [{ text: documents[0] }, { image: "data:image/png;base64,iVBORw0KGgo=" }] }), (err) => {
    assert.ok(err instanceof CohereError);
    assert.equal(err.statusCode, 400);
    assert.match(err.body.message, /^documents\[1\]: no text to rank/);
    assert.equal(err.body.detail, err.body.message);
    assert.equal(err.body.error.field, "documents[1]");
    return true;
  });
});

// --- LlamaIndex TS -------------------------------------------------------

const nodes = documents.map((text, i) => ({ node: new Document({ text, id_: `doc${i}` }), score: 0 }));

test("LlamaIndex CohereRerank: postprocessNodes keeps the selected nodes", async () => {
  const reranker = new LlamaCohereRerank({ apiKey: key, baseUrl: url, model: "ctxsel-topk", topN: 2 });
  const kept = await reranker.postprocessNodes(nodes, query);
  assert.equal(kept.length, 2);
  assert.equal(kept[0].node.id_, `doc${DC}`);
  assert.ok(kept[0].score >= kept[1].score);
  // Its default model name (rerank-english-v2.0) gets ctxsel's default strategy.
  const byDefault = await new LlamaCohereRerank({ apiKey: key, baseUrl: url }).postprocessNodes(nodes, query);
  assert.ok(byDefault.length >= 1 && byDefault[0].node.id_ === `doc${DC}`);
  const wrong = new LlamaCohereRerank({ apiKey: "nope", baseUrl: url });
  await assert.rejects(wrong.postprocessNodes(nodes, query), (err) => {
    assert.equal(err.statusCode, 401);
    assert.match(err.body.message, /missing or invalid API key/);
    return true;
  });
});

test("Vercel rerank() and LlamaIndex CohereRerank with an evidence model: the selected documents, whatever else the response carries", async () => {
  const cohere = createCohere({ apiKey: key, baseURL: `${url}/v2` });
  const res = await rerank({ model: cohere.reranking("ctxsel-evidence:budget=60"), query, documents });
  assert.ok(res.ranking.length >= 1 && res.ranking.length < documents.length, `kept ${res.ranking.length}`);
  for (let i = 1; i < res.ranking.length; i++) assert.ok(res.ranking[i - 1].score >= res.ranking[i].score);
  assert.match(res.response.body.ctxsel.strategy, /^evidence:budget=60/);
  const reranker = new LlamaCohereRerank({ apiKey: key, baseUrl: url, model: "ctxsel-evidence:budget=60", topN: 3 });
  const kept = await reranker.postprocessNodes(nodes, query);
  assert.ok(kept.length >= 1 && kept.length <= 3, `kept ${kept.length}`);
});

test("LlamaIndex OpenAIEmbedding: its default model name works through the alias", async () => {
  const emb = new OpenAIEmbedding({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 }); // model: text-embedding-ada-002
  assert.equal(emb.model, "text-embedding-ada-002");
  const [a, b, c] = await emb.getTextEmbeddings(["The cat sat on the mat.", "A kitten sat on a rug.", "Stock markets fell sharply."]);
  assert.equal(a.length, 512);
  assert.ok(cos(a, b) > cos(a, c));
  const other = new OpenAIEmbedding({ apiKey: key, baseURL: `${url}/v1`, model: "text-embedding-3-large", maxRetries: 0 });
  await assert.rejects(other.getTextEmbedding("x"), /--embedding-alias text-embedding-3-large=use-lite/);
});

test("LlamaIndex JinaAIEmbedding: Jina's request (input objects, task, late_chunking) is served", async () => {
  const jina = new JinaAIEmbedding({ apiKey: key, baseURL: `${url}/v1/embeddings`, model: "use-lite", task: "retrieval.passage", late_chunking: false });
  const [cat, kitten, stocks] = await jina.getTextEmbeddings(["The cat sat on the mat.", "A kitten sat on a rug.", "Stock markets fell sharply."]);
  assert.equal(cat.length, 512);
  assert.ok(cos(cat, kitten) > cos(cat, stocks));
  const asQuery = new JinaAIEmbedding({ apiKey: key, baseURL: `${url}/v1/embeddings`, model: "use-lite", task: "retrieval.query" });
  assert.ok(Math.abs(cos(await asQuery.getTextEmbedding("The cat sat on the mat."), cat) - 1) < 1e-6, "use-lite embeds queries as passages");
  const late = new JinaAIEmbedding({ apiKey: key, baseURL: `${url}/v1/embeddings`, model: "use-lite", late_chunking: true });
  await assert.rejects(late.getTextEmbedding("x"), /late chunking is not available/);
  await assert.rejects(jina.getImageEmbedding("https://example.com/cat.png"), /does not support image embeddings/); // refused by the client itself
  // Its error is the status and the body: Jina's detail names the field.
  const wide = new JinaAIEmbedding({ apiKey: key, baseURL: `${url}/v1/embeddings`, model: "use-lite", dimensions: 1024 });
  await assert.rejects(wide.getTextEmbedding("x"), (err) => {
    assert.match(err.message, /^Request failed with status 400: /);
    const body = JSON.parse(err.message.slice(err.message.indexOf("{")));
    assert.match(body.detail, /^dimensions: 1024: this model's vectors have 512 dimensions/);
    assert.equal(body.error.param, "dimensions");
    return true;
  });
  // Jina's default model is not served: the user is told what is.
  const byDefault = new JinaAIEmbedding({ apiKey: key, baseURL: `${url}/v1/embeddings` });
  await assert.rejects(byDefault.getTextEmbedding("x"), /"detail":"model: \\"jina-embeddings-v[0-9]+\\" is not served here: this server embeds with \\"use-lite\\"/);
});

test("LlamaIndex JinaAIReranker (llamaindex): Jina's rerank request, with its fixed URL sent to ctxsel", async () => {
  // The reranker posts to https://api.jina.ai/v1/rerank, a URL it does not
  // let callers change, with the key from JINAAI_API_KEY: fetch is pointed
  // at ctxsel for the duration of this test.
  const realFetch = globalThis.fetch;
  process.env.JINAAI_API_KEY = key;
  globalThis.fetch = (input, init) => realFetch(String(input).replace("https://api.jina.ai", url), init);
  try {
    const { JinaAIReranker } = await import("llamaindex");
    const reranker = new JinaAIReranker({ topN: 2 }); // model jina-reranker-v1-base-en: ctxsel's default strategy, capped at 2
    const kept = await reranker.postprocessNodes(nodes, query);
    assert.ok(kept.length >= 1 && kept.length <= 2, `kept ${kept.length}`);
    assert.equal(kept[0].node.id_, `doc${DC}`);
    // An evidence model, and return_evidence slipped into its request (the
    // client cannot send extension fields): the evidence in each result
    // does not disturb it.
    let sent = null;
    globalThis.fetch = (input, init) => {
      sent = { ...JSON.parse(init.body), return_evidence: true };
      return realFetch(String(input).replace("https://api.jina.ai", url), { ...init, body: JSON.stringify(sent) });
    };
    const pruning = new JinaAIReranker({ topN: 3, model: "ctxsel-evidence:budget=60" });
    const prunedKept = await pruning.postprocessNodes(nodes, query);
    assert.ok(prunedKept.length >= 1 && prunedKept.length <= 3, `kept ${prunedKept.length}`);
    assert.equal(sent.model, "ctxsel-evidence:budget=60");
    // Its error path never reads the response's status or body (it returns
    // the body's results, undefined on an error, and then iterates them):
    // no error shape can reach its user. A Jina client that reads "detail"
    // gets ctxsel's message there.
    const res = await realFetch(`${url}/v1/rerank`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: "jina-reranker-v2-base-multilingual", query, documents: [], top_n: 2 }) });
    assert.equal(res.status, 400);
    assert.match((await res.json()).detail, /^documents: no documents/);
  } finally {
    globalThis.fetch = realFetch;
    delete process.env.JINAAI_API_KEY;
  }
});

// --- MCP Inspector CLI and the SDK's OAuth provider ----------------------

// The Inspector CLI (v1, the last for Node < 22) finds its own package.json
// as "../package.json" of the working directory, so it runs from its build
// directory.
const require = createRequire(import.meta.url);
const inspectorDir = path.dirname(require.resolve("@modelcontextprotocol/inspector-cli/build/cli.js"));

function inspector(...args) {
  const r = spawnSync(process.execPath, [path.join(inspectorDir, "cli.js"), "--cli", ...args], {
    cwd: inspectorDir, encoding: "utf8", timeout: 60_000, env: { ...process.env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// typeArrays lists the schemas (by path) whose "type" is not one string.
function typeArrays(schema, at, out = []) {
  if (schema && typeof schema === "object") {
    if ("type" in schema && typeof schema.type !== "string") out.push(`${at}: ${JSON.stringify(schema.type)}`);
    for (const [k, v] of Object.entries(schema)) typeArrays(v, `${at}.${k}`, out);
  }
  return out;
}

test("MCP Inspector CLI over stdio: single-typed schemas, a tool call", () => {
  const list = inspector(bin, "mcp", "--index", index, "--method", "tools/list");
  assert.equal(list.code, 0, list.stderr);
  const { tools } = JSON.parse(list.stdout);
  assert.deepEqual(tools.map((t) => t.name).sort(), ["ask", "search", "select_context", "strategies"]);
  for (const t of tools) assert.deepEqual(typeArrays(t.inputSchema, t.name), [], `${t.name} has nullable type arrays`);
  const sel = tools.find((t) => t.name === "select_context").inputSchema;
  assert.deepEqual(sel.required, ["candidates"]);
  assert.equal(sel.properties.candidates.items.properties.score.type, "number");

  const call = inspector(bin, "mcp", "--method", "tools/call", "--tool-name", "select_context",
    "--tool-arg", `candidates=${JSON.stringify([{ id: "a", score: 0.9 }, { id: "b", score: 0.2 }])}`, "--tool-arg", "strategy=topk:k=1");
  assert.equal(call.code, 0, call.stderr);
  const res = JSON.parse(call.stdout);
  assert.deepEqual(JSON.parse(res.content[0].text).ids, ["a"]);
});

test("MCP Inspector CLI over /mcp: with the key it lists tools; without, it shows ctxsel's message", () => {
  const ok = inspector(`${url}/mcp`, "--transport", "http", "--method", "tools/list", "--header", `Authorization: Bearer ${key}`);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).tools.length, 4);
  const refused = inspector(`${url}/mcp`, "--transport", "http", "--method", "tools/list");
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /missing or invalid API key: send Authorization: Bearer KEY/);
  assert.doesNotMatch(refused.stderr, /OAuth metadata|authorization server|invalid_client/i);
});

test("MCP TypeScript SDK with an OAuth provider: /mcp without a key starts no OAuth flow", async () => {
  const requested = [];
  const oauthCalls = [];
  const record = (name, value) => (...args) => { oauthCalls.push(name); return value; };
  const authProvider = {
    get redirectUrl() { return "http://127.0.0.1:1/callback"; },
    get clientMetadata() { return { redirect_uris: ["http://127.0.0.1:1/callback"], client_name: "clienttest" }; },
    tokens: () => undefined, // no token yet: the client sends no key
    clientInformation: record("clientInformation", undefined),
    saveClientInformation: record("saveClientInformation"),
    saveTokens: record("saveTokens"),
    redirectToAuthorization: record("redirectToAuthorization"),
    saveCodeVerifier: record("saveCodeVerifier"),
    codeVerifier: record("codeVerifier", "v"),
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    authProvider,
    fetch: (input, init) => { requested.push(new URL(String(input)).pathname); return fetch(input, init); },
  });
  const client = new Client({ name: "ctxsel-clienttest", version: "1.0.0" });
  await assert.rejects(client.connect(transport), (err) => {
    assert.match(err.message, /missing or invalid API key/);
    return true;
  });
  assert.deepEqual(oauthCalls, [], "the client started an OAuth flow");
  assert.deepEqual([...new Set(requested)], ["/mcp"], "the client looked for OAuth metadata");
});
