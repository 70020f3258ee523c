package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// yamlToJSON converts a YAML document to indented JSON, keeping the order
// of its keys (a map would sort them) and writing its numbers as written
// (never through float64, so an example's amount stays exact).
func yamlToJSON(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeNode(&buf, &doc); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeNode(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: one document expected", n.Line)
		}
		return writeNode(b, n.Content[0])
	case yaml.AliasNode:
		return writeNode(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return fmt.Errorf("line %d: keys must be plain strings", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: key %q twice", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := writeNode(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeNode(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return writeScalar(b, n)
	}
	return fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func writeScalar(b *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!str":
		writeString(b, n.Value)
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		v, err := strconv.ParseBool(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %q is not a JSON boolean", n.Line, n.Value)
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		if !json.Valid([]byte(n.Value)) {
			return fmt.Errorf("line %d: %q is not a JSON number", n.Line, n.Value)
		}
		b.WriteString(n.Value)
	default:
		return fmt.Errorf("line %d: unsupported YAML tag %s", n.Line, n.ShortTag())
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}
