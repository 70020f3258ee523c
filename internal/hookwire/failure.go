package hookwire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"syscall"
)

// The classes of a delivery attempt that got no HTTP answer: the words a
// merchant reads about it. The error itself (with addresses, name servers
// and dialer text) is for the server's log only.
const (
	// FailureRefusedAddress: the guard refused the receiver's address.
	FailureRefusedAddress = "refused_address"
	// FailureDNS: the receiver's host name could not be looked up.
	FailureDNS = "dns_error"
	// FailureTimeout: no connection or no answer in time.
	FailureTimeout = "timeout"
	// FailureTLS: the TLS handshake with the receiver failed.
	FailureTLS = "tls_error"
	// FailureConnectionRefused: nothing listens at the receiver's port.
	FailureConnectionRefused = "connection_refused"
	// FailureConnection: anything else on the way (the connection was
	// reset or closed without an answer, the answer was not HTTP, ...).
	FailureConnection = "connection_error"
	// FailureInterrupted: the instance making the attempt stopped (a
	// crash, a kill) before recording its outcome; the receiver may or may
	// not have got the request (a delivery is marked before it is sent).
	// Not a class of ClassifyFailure: the instance that takes the delivery
	// over records it.
	FailureInterrupted = "interrupted"
)

// Failures are all the classes above, for those that list them (the
// metrics' label values).
var Failures = []string{FailureRefusedAddress, FailureDNS, FailureTimeout, FailureTLS, FailureConnectionRefused, FailureConnection, FailureInterrupted}

// ClassifyFailure names the class of err, the error of an HTTP request
// that got no answer, by the types it wraps (never by its text).
func ClassifyFailure(err error) string {
	var blocked *BlockedAddressError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &blocked):
		return FailureRefusedAddress
	case errors.As(err, &dnsErr):
		return FailureDNS
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return FailureTimeout
	case isTLS(err):
		return FailureTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return FailureConnectionRefused
	}
	return FailureConnection
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// isTLS reports a failed handshake: a *TLSError from Dialer, or one of the
// TLS and certificate errors an http.Client of its own makes.
func isTLS(err error) bool {
	var (
		own     *TLSError
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
		name    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	return errors.As(err, &own) || errors.As(err, &verify) || errors.As(err, &record) ||
		errors.As(err, &alert) || errors.As(err, &unknown) || errors.As(err, &name) || errors.As(err, &invalid)
}
