package hookwire

import (
	"slices"
	"testing"
)

func TestEventTypes(t *testing.T) {
	// Every event name, in the published order.
	want := []string{
		"deposit.pending", "deposit.success", "deposit.failed", "deposit.refunded",
		"swap.pending", "swap.success", "swap.failed",
		"withdrawal.pending", "withdrawal.success", "withdrawal.failed",
	}
	if !slices.Equal(EventTypes, want) {
		t.Fatalf("EventTypes = %v, want %v", EventTypes, want)
	}
	for _, name := range EventTypes {
		if !ValidEventName(name) {
			t.Errorf("ValidEventName(%q) = false", name)
		}
	}
}

func TestValidEventNameRejects(t *testing.T) {
	for _, name := range []string{
		"", "deposit", "deposit.", ".success", "deposit.success ", " deposit.success",
		"Deposit.success", "DEPOSIT.SUCCESS", "deposit.*", "*", "deposit_success",
		"deposit.successful", "swap.refunded", "withdrawal.refunded", "payout.success",
		"deposit.success,swap.success",
	} {
		if ValidEventName(name) {
			t.Errorf("ValidEventName(%q) = true", name)
		}
	}
}
