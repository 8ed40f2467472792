package evidencetrain

import "testing"

// Ties within the tolerance go to the cheapest setting.
func TestCheapest(t *testing.T) {
	ss := []*Setting{
		{Passages: 30, Trees: 400, Hop: 5, Mean: 0.150},
		{Passages: 20, Trees: 400, Hop: 5, Mean: 0.147},
		{Passages: 20, Trees: 100, Hop: 5, Mean: 0.146},
		{Passages: 20, Trees: 100, Hop: 8, Mean: 0.149},
		{Passages: 20, Trees: 50, Hop: 0, Mean: 0.070},
	}
	if got := cheapest(ss, 0.150-0.005); got != ss[1] {
		t.Fatalf("chose %+v", got)
	}
	if got := cheapest(ss, 0.1495); got != ss[0] {
		t.Fatalf("no tie: chose %+v", got)
	}
}
