package server

import "github.com/vektah/gqlparser/v2/ast"

// measurer computes what validation's work multiplies with, each
// fragment's share once (so in time linear in the document's length):
// the fields and the directives, arguments and values of a selection set
// with its fragments expanded, and how many of its fields share a
// response name.
type measurer struct {
	fragments map[string]*ast.FragmentDefinition
	sizes     map[string]*fragmentSize
}

// fragmentSize is a fragment's share: its size expanded, and the response
// names of the fields it adds to the selection set it is spread into
// (those of its inline fragments and spreads included), each counted up
// to maxSameName+1.
type fragmentSize struct {
	size  expandedSize
	names map[string]int
}

type expandedSize struct{ fields, notes int }

// visiting marks a fragment being measured: a cycle, refused by
// validation, adds nothing more.
var visiting = &fragmentSize{}

func newMeasurer(doc *ast.QueryDocument) *measurer {
	m := &measurer{fragments: map[string]*ast.FragmentDefinition{}, sizes: map[string]*fragmentSize{}}
	for _, f := range doc.Fragments {
		m.fragments[f.Name] = f
	}
	return m
}

// fragment is the share of the fragment named name; nil for an unknown
// one (validation refuses it).
func (m *measurer) fragment(name string) *fragmentSize {
	if fs, seen := m.sizes[name]; seen {
		return fs
	}
	f := m.fragments[name]
	if f == nil {
		return nil
	}
	m.sizes[name] = visiting
	fs := &fragmentSize{size: m.expanded(f.SelectionSet), names: map[string]int{}}
	m.addNames(fs.names, f.SelectionSet)
	m.sizes[name] = fs
	return fs
}

// expanded is set's size with its fragments expanded. It stops adding
// once either count is big enough to refuse.
func (m *measurer) expanded(set ast.SelectionSet) expandedSize {
	var n expandedSize
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			sub := m.expanded(s.SelectionSet)
			n.fields += 1 + sub.fields
			n.notes += arguments(s.Arguments) + directives(s.Directives) + sub.notes
		case *ast.InlineFragment:
			sub := m.expanded(s.SelectionSet)
			n.fields += sub.fields
			n.notes += directives(s.Directives) + sub.notes
		case *ast.FragmentSpread:
			n.notes += directives(s.Directives)
			if fs := m.fragment(s.Name); fs != nil {
				n.fields += fs.size.fields
				n.notes += fs.size.notes
			}
		}
		if n.fields > maxExpanded || n.notes > maxExpandedAnnotations {
			return n
		}
	}
	return n
}

// sameName is the most fields of set, its fragments' included, that share
// one response name.
func (m *measurer) sameName(set ast.SelectionSet) int {
	names := map[string]int{}
	m.addNames(names, set)
	most := 0
	for _, n := range names {
		most = max(most, n)
	}
	return most
}

// addNames counts into names the response names of set's fields, through
// its inline fragments and spreads.
func (m *measurer) addNames(names map[string]int, set ast.SelectionSet) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			name := s.Alias
			if name == "" {
				name = s.Name
			}
			names[name] = min(names[name]+1, maxSameName+1)
		case *ast.InlineFragment:
			m.addNames(names, s.SelectionSet)
		case *ast.FragmentSpread:
			if fs := m.fragment(s.Name); fs != nil {
				for name, n := range fs.names {
					names[name] = min(names[name]+n, maxSameName+1)
				}
			}
		}
	}
}
