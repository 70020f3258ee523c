// Package narration extracts the merchant reference that a payer writes into a
// bank-transfer narration as !!REF!!, which ties a deposit into a
// static_dynamic account to that reference.
package narration

import (
	"strings"

	"merchantpay/internal/validate"
)

// MaxLen is the longest reference a marker may hold, in bytes: the longest
// merchant reference a request may carry (validate.Reference).
const MaxLen = 100

// Reference returns the reference written between "!!" and "!!" in a bank
// transfer narration, as written, and ok = true; otherwise "" and false.
// Callers compare references without regard to case.
//
// The rules:
//
//   - The narration is read as bytes. It may have any length and hold any
//     bytes, including invalid UTF-8. Only the ASCII '!' (0x21) delimits;
//     look-alikes such as the full-width U+FF01 do not.
//   - The narration is cut into maximal runs of '!' and the pieces of text
//     between them. A marker is a piece of text that has a run of at least two
//     '!' directly before it and a run of at least two '!' directly after it.
//     Longer runs are delimiters too ("!!!REF!!!" gives "REF"), since '!'
//     cannot belong to a reference; a single '!' is not a delimiter.
//   - A marker is well formed when the whole piece is a merchant reference
//     as a request's reference field takes it (validate.Reference; the two
//     are one namespace of references): 1 to MaxLen (100) bytes of A–Z, a–z,
//     0–9, '.', '_', ':', '@', '+' or '-', the first a letter or digit.
//     Nothing is trimmed or cut: "!! REF !!", "!!RE F!!", "!!RÉF!!",
//     "!!-REF!!" and a 101-byte piece are malformed and ignored, as are
//     "!!!!" (nothing inside) and an opening with no closing ("!!REF").
//   - Text before and after markers is ignored, whatever it holds.
//   - Several well-formed markers: if they all spell the same reference
//     ignoring ASCII case, the first is returned as written ("!!ab!! !!AB!!"
//     gives "ab"). If two differ, the narration is ambiguous and ok is false:
//     leaving a deposit untied is safer than tying it to the wrong reference.
//     Adjacent markers share their delimiter, so "!!A!!B!!" holds the markers
//     A and B (it reads either way) and is ambiguous.
//
// Reference runs in one pass, in time linear in len(narration), and allocates
// only the copy of the reference it returns (so a long narration is not kept
// alive by it).
func Reference(narration string) (ref string, ok bool) {
	s := narration
	n := len(s)
	found := ""
	bangs := 0 // length of the run of '!' just before position i
	for i := 0; i < n; {
		if s[i] == '!' {
			j := i
			for j < n && s[j] == '!' {
				j++
			}
			bangs, i = j-i, j
			continue
		}
		// s[i:j] is a maximal piece of text without '!'.
		j, clean := i, true
		for j < n && s[j] != '!' {
			clean = clean && validate.ReferenceByte(s[j])
			j++
		}
		if clean && bangs >= 2 && j-i <= MaxLen && j+1 < n && s[j+1] == '!' && validate.Reference(s[i:j]) == "" {
			// s[j] is '!' because the piece is maximal and j < n.
			switch piece := s[i:j]; {
			case found == "":
				found = piece
			case !strings.EqualFold(found, piece):
				return "", false
			}
		}
		bangs, i = 0, j
	}
	if found == "" {
		return "", false
	}
	return strings.Clone(found), true
}
