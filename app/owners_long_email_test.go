package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/earshothq/earshot/core"
)

// TestOwnerAddressTooLong: an address longer than an address can be
// (RFC 5321: 254 characters) is refused as invalid on both databases,
// not met by Postgres's bound on an index entry as an internal error.
func TestOwnerAddressTooLong(t *testing.T) {
	t.Parallel()
	b := make([]byte, 1600)
	_, _ = rand.Read(b)
	long := hex.EncodeToString(b) + "@example.com" // random, so the index cannot compress it
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		if _, err := w.owners.Create(ctx, long, ""); !core.IsKind(err, core.KindInvalid) {
			t.Fatalf("Create with a %d-character address = %v, want invalid", len(long), err)
		}
		o, err := w.owners.Create(ctx, "ada@example.com", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.owners.Update(ctx, o.ID, &long, nil); !core.IsKind(err, core.KindInvalid) {
			t.Fatalf("Update to a %d-character address = %v, want invalid", len(long), err)
		}
	})
}
