// Package all links every registrant of the module: the score-only
// strategies (cutoff), the band (ldar), the text selectors (evidence,
// picker) and the answering route (selfroute). A program or package that
// imports it resolves every name ctxsel documents, DefaultStrategy
// included, whatever else it links:
//
//	import _ "github.com/ctxsel/ctxsel/all"
//
// The names a binary serves then depend on this one list, not on its link
// graph.
package all

import (
	_ "github.com/ctxsel/ctxsel/cutoff"    // the score-only strategies
	_ "github.com/ctxsel/ctxsel/evidence"  // the evidence selector, DefaultStrategy
	_ "github.com/ctxsel/ctxsel/ldar"      // the band
	_ "github.com/ctxsel/ctxsel/picker"    // the LLM picker
	_ "github.com/ctxsel/ctxsel/selfroute" // the answering route
)
