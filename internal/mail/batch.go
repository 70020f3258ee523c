package mail

import "context"

// batchSender sends the e-mails of one pass over one SMTP connection,
// opened for the first of them and closed at the end of the pass. A
// message the server refuses leaves the connection for the next; a
// connection that breaks is opened again once for the next message. When
// a connection cannot be opened, the pass's remaining messages fail at
// once with that error (to be retried on schedule) rather than each
// waiting out its own timeout.
type batchSender struct {
	smtp    *SMTP
	conn    *Conn
	dialErr error
	dials   int
}

// maxDials bounds the connections one pass opens.
const maxDials = 2

func (b *batchSender) send(ctx context.Context, to string, msg []byte) error {
	if b.dialErr != nil {
		return b.dialErr
	}
	if b.conn == nil {
		b.dials++
		b.conn, b.dialErr = b.smtp.Dial(ctx)
		if b.dialErr != nil {
			return b.dialErr
		}
	}
	err := b.conn.Send(ctx, to, msg)
	if err != nil && !b.conn.Usable() {
		b.conn = nil
		if b.dials >= maxDials {
			b.dialErr = err
		}
	}
	return err
}

// close ends the pass's connection, if open.
func (b *batchSender) close() {
	if b.conn != nil {
		b.conn.Close()
		b.conn = nil
	}
}
