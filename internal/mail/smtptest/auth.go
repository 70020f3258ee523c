package smtptest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net"
	"slices"
	"strings"
	"time"
)

// auth runs one AUTH exchange (arg is what follows the verb), recording
// what the client sent; false when the connection failed.
func (s *Server) auth(ss *Session, arg string, r *bufio.Reader, reply func(string, ...any) bool) bool {
	mech, initial, _ := strings.Cut(arg, " ")
	mech = strings.ToUpper(mech)
	if s.opt.Username == "" || !slices.Contains(s.opt.AuthMechanisms, mech) {
		return reply("504 5.5.4 mechanism not supported")
	}
	// ask returns the client's next line, decoded; ok false when the
	// client cancelled (or sent no base64) or the connection failed.
	ask := func(prompt string) (string, bool, bool) {
		if !reply("334 %s", base64.StdEncoding.EncodeToString([]byte(prompt))) {
			return "", false, false
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return "", false, false
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimRight(line, "\r\n"))
		return string(b), err == nil, true
	}
	decode := func(b64 string) (string, bool) {
		b, err := base64.StdEncoding.DecodeString(b64)
		return string(b), err == nil
	}
	var user, pass string
	switch mech {
	case "PLAIN":
		resp, ok := decode(initial)
		if initial == "" {
			var alive bool
			if resp, ok, alive = ask(""); !alive {
				return false
			}
		}
		parts := strings.Split(resp, "\x00")
		if !ok || len(parts) != 3 {
			return reply("501 5.5.2 malformed PLAIN response")
		}
		user, pass = parts[1], parts[2]
	case "LOGIN":
		ok := true
		if initial != "" {
			user, ok = decode(initial)
		} else {
			var alive bool
			if user, ok, alive = ask("Username:"); !alive {
				return false
			}
		}
		if ok {
			var alive bool
			if pass, ok, alive = ask("Password:"); !alive {
				return false
			}
		}
		if !ok {
			return reply("501 5.5.2 malformed LOGIN response")
		}
	}
	good := user == s.opt.Username && pass == s.opt.Password
	s.record(ss, func(ss *Session) {
		ss.AuthMechanism, ss.AuthUsername, ss.AuthPassword, ss.Authenticated = mech, user, pass, good
	})
	if !good {
		return reply("535 5.7.8 authentication credentials invalid")
	}
	return reply("235 2.7.0 authentication successful")
}

// selfSigned makes a certificate for 127.0.0.1 and a client configuration
// that trusts it (and nothing else).
func selfSigned() (tls.Certificate, *tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "smtptest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}
