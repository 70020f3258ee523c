package graph

import (
	"strconv"
	"strings"
	"time"

	"merchantpay/graph/model"
	"merchantpay/internal/apperr"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/page"
	"merchantpay/internal/tenant"
	"merchantpay/internal/transactions"
	"merchantpay/internal/webhooks"
)

// transactionFilter converts and validates a GraphQL filter (field names
// under prefix, e.g. "filter.").
func transactionFilter(in *model.TransactionFilter, prefix string, f *apperr.Fields) transactions.Filter {
	var tf transactions.Filter
	if in == nil {
		return tf
	}
	tf.Type = optionalString(in.Type)
	if in.Status != nil {
		s := strings.ToLower(string(*in.Status))
		tf.Status = &s
	}
	tf.Currency, tf.Search = in.Currency, in.Search
	if in.CreatedFrom != nil {
		t := in.CreatedFrom.UTC()
		tf.CreatedFrom = &t
	}
	if in.CreatedTo != nil {
		t := in.CreatedTo.UTC()
		tf.CreatedTo = &t
	}
	tf.Validate(transactions.FilterFields{Type: prefix + "type", Status: prefix + "status", Currency: prefix + "currency",
		CreatedFrom: prefix + "createdFrom", CreatedTo: prefix + "createdTo", Search: prefix + "search"}, f)
	return tf
}

func modeModel(mode string) model.Mode {
	if mode == tenant.Live {
		return model.ModeLive
	}
	return model.ModeTest
}

func apiKeyModel(k merchants.Key) *model.APIKey {
	return &model.APIKey{ID: k.ID, Kind: k.Kind, Mode: modeModel(k.Mode), Prefix: k.Prefix, CreatedAt: k.CreatedAt,
		LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt}
}

func balanceEntryModel(e ledger.HistoryEntry) *model.BalanceEntry {
	m := &model.BalanceEntry{ID: strconv.FormatInt(e.ID, 10), CreatedAt: e.CreatedAt, Currency: string(e.Currency),
		Amount: money.FromMinor(e.Amount, e.Currency), BalanceAfter: money.FromMinor(e.BalanceAfter, e.Currency),
		Description: e.Memo}
	if e.TransactionRef != "" {
		ref := e.TransactionRef
		m.TransactionReference = &ref
	}
	return m
}

func volumeModel(v transactions.Volume) *model.Volume {
	return &model.Volume{Currency: string(v.Currency), Incoming: money.FromMinor(v.Incoming, v.Currency),
		Outgoing: money.FromMinor(v.Outgoing, v.Currency), Count: v.Count}
}

func deliveryConnection(ds []webhooks.Delivery, p page.Params, info page.Info) *model.WebhookDeliveryConnection {
	nodes := deliveryModels(ds)
	conn := &model.WebhookDeliveryConnection{Edges: make([]*model.WebhookDeliveryEdge, len(ds)), PageInfo: pageInfo(p, info)}
	for i, d := range ds {
		conn.Edges[i] = &model.WebhookDeliveryEdge{Cursor: webhooks.DeliveryCursor(d).Encode(), Node: nodes[i]}
	}
	return conn
}

// overlapOf reads rollApiKeys' overlapSeconds (0 when absent).
func overlapOf(in *model.RollAPIKeysInput, f *apperr.Fields) time.Duration {
	if in == nil || in.OverlapSeconds == nil {
		return 0
	}
	d := time.Duration(*in.OverlapSeconds) * time.Second
	merchants.ValidateOverlap(d, "overlapSeconds", f)
	return d
}
