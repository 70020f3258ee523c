package binancepay

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Refetch limits: an unknown serial makes the adapter fetch the
// certificates again at most once per RefetchPerSerial for that serial, and
// no fetch follows another within RefetchGap, so webhooks with forged
// serials cannot make it hammer Binance. A fetch returns every current
// certificate, so a real new serial is learnt by whichever fetch comes
// first after Binance rotates its key.
const (
	RefetchPerSerial = time.Minute
	RefetchGap       = 10 * time.Second
	// maxTried bounds the memory of serials that were looked for.
	maxTried = 1024
)

// certCache holds Binance's webhook public keys by certificate serial.
type certCache struct {
	fetch sync.Mutex // one fetch at a time; held across the network call

	mu        sync.Mutex // guards the fields below
	keys      map[string]*rsa.PublicKey
	tried     map[string]time.Time
	lastFetch time.Time
}

func (cc *certCache) init() {
	cc.keys = map[string]*rsa.PublicKey{}
	cc.tried = map[string]time.Time{}
}

func (cc *certCache) get(serial string) *rsa.PublicKey {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.keys[serial]
}

// ErrUnknownCertificate is Verify's answer to a serial that Binance's
// certificates do not include (or that was looked for too recently).
var ErrUnknownCertificate = errors.New("binancepay: unknown webhook certificate serial")

// publicKey is the key of a certificate serial: from the cache, else from
// one fetch of the certificates, within the refetch limits.
func (c *Client) publicKey(ctx context.Context, serial string) (*rsa.PublicKey, error) {
	cc := &c.certs
	if k := cc.get(serial); k != nil {
		return k, nil
	}
	cc.fetch.Lock()
	defer cc.fetch.Unlock()
	if k := cc.get(serial); k != nil { // fetched while this call waited
		return k, nil
	}
	now := c.Clock.Now()
	cc.mu.Lock()
	last, seen := cc.tried[serial]
	if (seen && now.Sub(last) < RefetchPerSerial) || (!cc.lastFetch.IsZero() && now.Sub(cc.lastFetch) < RefetchGap) {
		cc.mu.Unlock()
		return nil, fmt.Errorf("%w (certificates fetched moments ago)", ErrUnknownCertificate)
	}
	if len(cc.tried) >= maxTried {
		for s, at := range cc.tried {
			if now.Sub(at) >= RefetchPerSerial {
				delete(cc.tried, s)
			}
		}
		if len(cc.tried) >= maxTried {
			cc.mu.Unlock()
			return nil, fmt.Errorf("%w (too many unknown serials of late)", ErrUnknownCertificate)
		}
	}
	cc.tried[serial] = now
	cc.lastFetch = now
	cc.mu.Unlock()

	keys, err := c.fetchCertificates(ctx)
	if err != nil {
		return nil, fmt.Errorf("binancepay: fetching the webhook certificates: %w", err)
	}
	cc.mu.Lock()
	cc.keys = keys
	cc.mu.Unlock()
	if k := keys[serial]; k != nil {
		return k, nil
	}
	return nil, ErrUnknownCertificate
}

type certificate struct {
	CertSerial flexString `json:"certSerial"`
	CertPublic string     `json:"certPublic"`
}

// fetchCertificates asks Binance (a signed request) for its current
// webhook certificates.
func (c *Client) fetchCertificates(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	var certs []certificate
	if err := c.post(ctx, pathCertificates, struct{}{}, &certs); err != nil {
		return nil, err
	}
	keys := make(map[string]*rsa.PublicKey, len(certs))
	for _, ct := range certs {
		k, err := ParsePublicKey(ct.CertPublic)
		if err != nil {
			return nil, fmt.Errorf("certificate %s: %w", ct.CertSerial, err)
		}
		keys[string(ct.CertSerial)] = k
	}
	return keys, nil
}

// ParsePublicKey reads an RSA public key written as PEM ("PUBLIC KEY" or
// "RSA PUBLIC KEY"), or as the bare base64 of either DER form.
func ParsePublicKey(s string) (*rsa.PublicKey, error) {
	s = strings.TrimSpace(s)
	var der []byte
	pkcs1 := false
	if block, _ := pem.Decode([]byte(s)); block != nil {
		switch block.Type {
		case "PUBLIC KEY":
		case "RSA PUBLIC KEY":
			pkcs1 = true
		default:
			return nil, fmt.Errorf("PEM block %q is not a public key", block.Type)
		}
		der = block.Bytes
	} else {
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return nil, errors.New("the public key is neither PEM nor base64")
		}
		der = b
	}
	if pkcs1 {
		return x509.ParsePKCS1PublicKey(der)
	}
	if k, err := x509.ParsePKIXPublicKey(der); err == nil {
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, errors.New("the public key is not RSA")
		}
		return rk, nil
	}
	return x509.ParsePKCS1PublicKey(der)
}
