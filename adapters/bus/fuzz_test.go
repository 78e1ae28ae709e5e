package bus

import (
	"bytes"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// FuzzDelivery hands the AMQP transport's reader any delivery a broker
// can hold: a body and headers of the types AMQP tables carry (the
// seeds: the bus's own messages, and the broker's x-death and
// x-delivery-count, as in foreign_test.go). It checks that every one is
// read, with its body as it came and its key when the key header is a
// string, so that no message is refused and nacked back without end.
func FuzzDelivery(f *testing.F) {
	f.Add([]byte(`{"matchId":"m_1"}`), "m_1", "x-delivery-count", uint8(1), int64(2), "")
	f.Add([]byte(nil), "", "x-death", uint8(5), int64(0), "rejected")
	f.Add([]byte("\xff"), "k", "_watermill_message_uuid", uint8(2), int64(-1), "")
	f.Add([]byte(`{}`), "k", keyMetadata, uint8(3), int64(7), "")
	f.Fuzz(func(t *testing.T, body []byte, key, name string, kind uint8, n int64, s string) {
		h := amqp.Table{}
		if key != "" {
			h[keyMetadata] = key
		}
		var v any
		switch kind % 7 {
		case 0:
			v = s
		case 1:
			v = n
		case 2:
			v = n != 0
		case 3:
			v = []byte(s)
		case 4:
			v = time.Unix(n%1e10, 0)
		case 5:
			v = []any{amqp.Table{"reason": s, "count": n}}
		case 6:
			v = nil
		}
		h[name] = v
		m, err := marshaler{}.Unmarshal(amqp.Delivery{Headers: h, Body: body})
		if err != nil {
			t.Fatalf("a delivery with %s = %#v refused: %v", name, v, err)
		}
		if !bytes.Equal(m.Payload, body) {
			t.Errorf("payload %q, want %q", m.Payload, body)
		}
		want := key
		if name == keyMetadata {
			want, _ = v.(string)
		}
		if got := m.Metadata.Get(keyMetadata); got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	})
}
