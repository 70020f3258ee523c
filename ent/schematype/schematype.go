// Package schematype holds the Go types of JSON columns, apart from the
// schema package so that generated code can import them without a cycle.
package schematype

import "github.com/shopspring/decimal"

// Document is one identity document of a wallet owner.
type Document struct {
	DocumentType     string `json:"document_type"`
	DocumentFile     string `json:"document_file"`
	DocumentFileType string `json:"document_file_type"`
	DocumentNo       string `json:"document_no"`
}

// FeeRule is a fee for one transaction type.
type FeeRule struct {
	Type  string          `json:"type"` // FLAT or PERCENTAGE
	Value decimal.Decimal `json:"value"`
}
