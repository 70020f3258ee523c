package pipeline

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"merchantpay/internal/apperr"
)

// MaxBody is the largest request body of either API, 1 MiB; a larger one
// is 413 PAYLOAD_TOO_LARGE.
const MaxBody = 1 << 20

// Body is the step that reads the request's body (Route.BodyLimit bytes
// at most) into Call.Body, under the body deadline the server set.
func Body(next Handler) Handler {
	return func(c *Call) error {
		if c.Route.BodyLimit > 0 {
			body, err := ReadBody(c.W, c.R, c.Route.BodyLimit)
			if err != nil {
				return err
			}
			c.Body = body
		}
		return next(c)
	}
}

// ReadBody checks the media type and reads at most limit bytes. A body of
// unknown length (chunked: ContentLength -1) is checked as any other.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	if ct != "" || r.ContentLength != 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, apperr.New(apperr.UnsupportedMediaType, "the request body must be application/json")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, apperr.New(apperr.PayloadTooLarge, "the request body is over %s", size(limit))
		}
		return nil, apperr.Wrap(apperr.BadRequest, err, "could not read the request body")
	}
	return body, nil
}

// size prints a byte count as the limits are set: whole MiB, else bytes.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
