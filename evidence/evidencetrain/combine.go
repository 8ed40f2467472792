package evidencetrain

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel/evidence"
)

// Combine returns top with models by kind of text (evidence.Model.Kinds):
// the units of a passage the splitter reads as that kind are scored by
// kinds[kind], everything else stays top's (prose, the candidates, the hop,
// the floor and the stop). A kind's model must have no hop and no kinds
// of its own; its floor, stop, passages and other question-level settings
// are not read. Kinds already in top are replaced by those given; a nil
// model removes its kind.
func Combine(top *evidence.Model, kinds map[string]*evidence.Model) (*evidence.Model, error) {
	if top == nil {
		return nil, errors.New("evidence combine: no top model")
	}
	m := *top
	m.Kinds = maps.Clone(top.Kinds)
	if m.Kinds == nil {
		m.Kinds = map[string]*evidence.Model{}
	}
	m.Provenance = maps.Clone(top.Provenance)
	if m.Provenance == nil {
		m.Provenance = map[string]string{}
	}
	for _, kind := range slices.Sorted(maps.Keys(kinds)) {
		sub := kinds[kind]
		if sub == nil {
			delete(m.Kinds, kind)
			continue
		}
		if sub.Kinds != nil {
			return nil, fmt.Errorf("evidence combine: kind %s: its model has models by kind of its own", kind)
		}
		if sub.Hop != 0 {
			return nil, fmt.Errorf("evidence combine: kind %s: its model has a second hop (%d); a kind's model is scored once", kind, sub.Hop)
		}
		m.Kinds[kind] = sub
	}
	if len(m.Kinds) == 0 {
		m.Kinds = nil
		delete(m.Provenance, "kinds")
	} else {
		m.Version = evidence.ModelVersion
		var parts []string
		for _, kind := range slices.Sorted(maps.Keys(m.Kinds)) {
			sub := m.Kinds[kind]
			parts = append(parts, fmt.Sprintf("%s: %s, %d features (its provenance in kinds.%s)", kind, sub.Learner, len(sub.Features), kind))
		}
		m.Provenance["kinds"] = "passages the splitter reads as a kind of text (evidence.RouteOf) are scored by its model; " + strings.Join(parts, "; ")
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("evidence combine: %w", err)
	}
	return &m, nil
}
