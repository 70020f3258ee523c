package banks

import "strconv"

// Error is the type of the errors this package's NUBAN functions return;
// compare with errors.Is against the constants below.
type Error string

func (e Error) Error() string { return string(e) }

const (
	// ErrBankCode: the bank code is not exactly 3 ASCII digits.
	ErrBankCode Error = "banks: NUBAN bank code must be 3 digits"
	// ErrSerial: the serial is not exactly 9 ASCII digits, or is ≥ 10^9.
	ErrSerial Error = "banks: NUBAN serial must be 9 digits"
)

// NUBANCheckDigit computes the CBN (2010) NUBAN check digit for a 9-digit
// serial at the bank with the 3-digit CBN code bankCode3: the 12 digits
// bankCode3+serial9 are weighted 3,7,3,3,7,3,3,7,3,3,7,3 and summed; the check
// digit is 10 − (sum mod 10), with 10 becoming 0. It returns the digit's value
// 0–9 (not its ASCII character). Example: bank 011, serial 000001457 → 9, so
// the account number is 0000014579.
func NUBANCheckDigit(bankCode3 string, serial9 string) (byte, error) {
	if !isDigits(bankCode3, 3) {
		return 0, ErrBankCode
	}
	if !isDigits(serial9, 9) {
		return 0, ErrSerial
	}
	return checkDigit(bankCode3, serial9), nil
}

// checkDigit assumes 3 and 9 ASCII digits.
func checkDigit(bank, serial string) byte {
	// CBN weights for the bank code followed by the serial.
	weights := [12]int{3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3}
	sum := 0
	for i := range 3 {
		sum += int(bank[i]-'0') * weights[i]
	}
	for i := range 9 {
		sum += int(serial[i]-'0') * weights[3+i]
	}
	return byte((10 - sum%10) % 10)
}

// ValidNUBAN reports whether account is a 10-digit NUBAN whose last digit is
// the check digit of its first 9 digits at the bank with 3-digit CBN code
// bankCode3. Anything else (wrong length, non-digits, a bank code that is not
// 3 digits) is invalid.
func ValidNUBAN(bankCode3, account string) bool {
	if !isDigits(bankCode3, 3) || !isDigits(account, 10) {
		return false
	}
	return checkDigit(bankCode3, account[:9]) == account[9]-'0'
}

// MakeNUBAN builds the 10-digit NUBAN for serial (0 ≤ serial < 10^9, written
// with leading zeros) at the bank with 3-digit CBN code bankCode3.
func MakeNUBAN(bankCode3 string, serial uint64) (string, error) {
	if !isDigits(bankCode3, 3) {
		return "", ErrBankCode
	}
	if serial >= 1_000_000_000 {
		return "", ErrSerial
	}
	s := strconv.FormatUint(serial, 10)
	b := make([]byte, 0, 10)
	for range 9 - len(s) {
		b = append(b, '0')
	}
	b = append(b, s...)
	b = append(b, '0'+checkDigit(bankCode3, string(b)))
	return string(b), nil
}

// IsAccountNumber reports whether s has the shape of a NUBAN account
// number: ten digits (the check digit is the bank's business, see
// ValidNUBAN).
func IsAccountNumber(s string) bool { return isDigits(s, 10) }
