package ctxsel

// ForgetRanking drops a curve's cached ranking, so benchmarks can time
// selections on a curve as if it were new.
func ForgetRanking(c *Curve) { c.top = nil }
