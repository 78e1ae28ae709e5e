package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// Idempotency-Key sent twice in one request is refused, as a repeated
// query parameter is: which key should replay the phrase cannot be told,
// and the first was taken silently.
func TestIdempotencyKeyOnce(t *testing.T) {
	body := `{"phrase":"acme","platform":"x"}`
	r := httptest.NewRequest("POST", "/api/v1/keywords", strings.NewReader(body))
	r.Header.Add("Idempotency-Key", "k1")
	r.Header.Add("Idempotency-Key", "k2")
	_, err := decodeAddPhrase(context.Background(), r)
	if core.KindOf(err).Code() != "invalid_parameter" || core.Message(err) != "Idempotency-Key is given 2 times: send it once" {
		t.Errorf("two Idempotency-Key headers: %v, want invalid_parameter", err)
	}
	r = httptest.NewRequest("POST", "/api/v1/keywords", strings.NewReader(body))
	r.Header.Set("Idempotency-Key", "k1")
	req, err := decodeAddPhrase(context.Background(), r)
	if err != nil || req.(addPhraseRequest).idemKey != "k1" {
		t.Errorf("one Idempotency-Key: %+v, %v", req, err)
	}
}
