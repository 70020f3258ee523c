package rails

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
)

// DefaultIssuingBankCode is Wema Bank's CBN code, where the sandbox issues
// accounts unless told otherwise.
const DefaultIssuingBankCode = "035"

// DefaultPayoutDelay is how long a sandbox payout stays pending.
const DefaultPayoutDelay = 3 * time.Second

// UnresolvableAccount is the account number for which the sandbox's name
// enquiry fails and to which its payouts fail.
const UnresolvableAccount = "0000000000"

// SandboxOptions configure the sandbox rails; zero values take the defaults.
type SandboxOptions struct {
	// IssuingBankCode is the 3-digit CBN code of a bank of the Nigerian list.
	IssuingBankCode string
	PayoutDelay     time.Duration
}

// Sandbox is the built-in simulated rails. It keeps no state of its own, so
// any number of instances on one database agree.
type Sandbox struct {
	clock  clock.Clock
	bank   banks.NGBank
	delay  time.Duration
	serial func() uint64
}

var _ Rails = (*Sandbox)(nil)

// NewSandbox builds the sandbox rails over the bank directory.
func NewSandbox(dir *banks.Directory, c clock.Clock, opt SandboxOptions) (*Sandbox, error) {
	if opt.IssuingBankCode == "" {
		opt.IssuingBankCode = DefaultIssuingBankCode
	}
	if opt.PayoutDelay <= 0 {
		opt.PayoutDelay = DefaultPayoutDelay
	}
	bank, ok := dir.NGByCode(opt.IssuingBankCode)
	if !ok {
		return nil, fmt.Errorf("rails: issuing bank %q is not in the Nigerian bank list", opt.IssuingBankCode)
	}
	// NUBANs carry the 3-digit CBN code in their check digit; longer codes
	// belong to institutions that issue through a sponsor bank.
	if _, err := banks.MakeNUBAN(bank.Code, 0); err != nil {
		return nil, fmt.Errorf("rails: issuing bank %q (%s) has no 3-digit CBN code", bank.Code, bank.Name)
	}
	return &Sandbox{clock: c, bank: bank, delay: opt.PayoutDelay, serial: randomSerial}, nil
}

// randomSerial draws a 9-digit NUBAN serial without a leading zero. Random
// serials keep account numbers unguessable and spread over 900 million
// values, so collisions (caught by the unique index) are rare.
func randomSerial() uint64 { return 100_000_000 + rand.Uint64N(900_000_000) }

// IssuingBank returns the bank at which accounts are issued.
func (s *Sandbox) IssuingBank() banks.NGBank { return s.bank }

// IssueAccountNumber proposes a random valid NUBAN at the issuing bank.
func (s *Sandbox) IssueAccountNumber(_ context.Context, _ IssueRequest) (Issued, error) {
	n, err := banks.MakeNUBAN(s.bank.Code, s.serial())
	if err != nil {
		return Issued{}, err
	}
	return Issued{AccountNumber: n, BankCode: s.bank.Code, BankName: s.bank.Name}, nil
}

// ResolveAccount returns a stable, realistic Nigerian name derived from the
// bank code and account number, and fails for UnresolvableAccount.
func (s *Sandbox) ResolveAccount(_ context.Context, bankCode, accountNumber string) (string, error) {
	if accountNumber == UnresolvableAccount {
		return "", apperr.New(apperr.AccountNotResolved, "account %s could not be resolved at bank %s", accountNumber, bankCode)
	}
	return SandboxName(bankCode, accountNumber), nil
}

// SubmitPayout accepts every payout; it settles after the payout delay.
func (s *Sandbox) SubmitPayout(_ context.Context, p Payout) (PayoutResult, error) {
	return PayoutResult{Status: PayoutPending, RailsReference: sandboxPayoutRef(p.Reference),
		NextCheck: s.clock.Now().Add(s.delay)}, nil
}

// CheckPayout settles a payout once the delay since SubmittedAt has passed:
// it fails when the beneficiary account is UnresolvableAccount and succeeds
// otherwise.
func (s *Sandbox) CheckPayout(_ context.Context, q PayoutQuery) (PayoutResult, error) {
	ref := q.RailsReference
	if ref == "" {
		ref = sandboxPayoutRef(q.Payout.Reference)
	}
	due := q.SubmittedAt.Add(s.delay)
	if s.clock.Now().Before(due) {
		return PayoutResult{Status: PayoutPending, RailsReference: ref, NextCheck: due}, nil
	}
	if q.Payout.AccountNumber == UnresolvableAccount {
		return PayoutResult{Status: PayoutFailed, RailsReference: ref,
			Reason: "the beneficiary bank rejected the transfer: account " + UnresolvableAccount + " does not exist"}, nil
	}
	return PayoutResult{Status: PayoutSucceeded, RailsReference: ref, SettledAt: due}, nil
}

func sandboxPayoutRef(reference string) string { return "SBX-" + reference }

// SandboxName is the name the sandbox's name enquiry gives an account: the
// same for the same bank and number, different (mostly) for others, drawn
// from names common in Nigeria's main naming traditions and written as NIBSS
// name enquiries print them, in capitals, surname first.
func SandboxName(bankCode, accountNumber string) string {
	sum := sha256.Sum256([]byte(bankCode + "/" + accountNumber))
	pick := func(i int, n int) int { return int(binary.BigEndian.Uint32(sum[4*i:]) % uint32(n)) }
	g := nameGroups[pick(0, len(nameGroups))]
	surname := g.surnames[pick(1, len(g.surnames))]
	first := g.firstNames[pick(2, len(g.firstNames))]
	middle := g.firstNames[pick(3, len(g.firstNames))]
	if middle == first {
		return surname + " " + first
	}
	return surname + " " + first + " " + middle
}
