package server

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Cross-site request forgery: a page on another site may POST to this
// server without asking it first (a CORS "simple request") only with a
// form's or text's content type, or none at all (fetch with a Blob body and
// mode "no-cors"). Requiring application/json on every POST, the header
// present, makes the browser ask first (a preflight this server never
// approves), so such a page cannot make the server run an ask and its LLM
// call. A compressed body is refused as well: nothing here decompresses, and
// a gzip body read as JSON gives a confusing parse error.

// jsonBodyError is why a POST's headers do not announce an uncompressed
// JSON body ("" when they do), with the header at fault.
func jsonBodyError(r *http.Request) (field, msg string) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return "Content-Type", "missing: send Content-Type: application/json"
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return "Content-Type", fmt.Sprintf("%q: send application/json", ct)
	}
	for _, ce := range r.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(ce, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return "Content-Encoding", fmt.Sprintf("%q is not supported: send the body uncompressed", c)
			}
		}
	}
	return "", ""
}

// requireJSON refuses a POST whose headers do not announce an uncompressed
// JSON body with 415, in the route's error shape. New puts it in front of
// every POST route of the table and of /mcp's POSTs, so no route can be
// added without it.
func requireJSON(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if field, msg := jsonBodyError(r); msg != "" {
				refuse(w, http.StatusUnsupportedMediaType, field, msg)
				return
			}
		}
		h(w, r)
	}
}

// refuse writes a refusal in the route's error shape: ctxsel's, the
// rerank routes', or a JSON-RPC error object on /mcp.
func refuse(w http.ResponseWriter, status int, field, msg string) {
	if routeShape(w) == shapeMCP {
		if field != "" {
			msg = field + ": " + msg
		}
		writeRPCError(w, status, nil, jsonrpc.CodeInvalidRequest, msg)
		return
	}
	writeError(w, status, field, msg)
}
