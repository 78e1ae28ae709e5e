package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// namingKeys makes keys under core's rule for their names, as app.Keys
// does, so a name over the bound is refused with core's words.
type namingKeys struct{ helperKeys }

func (k *namingKeys) CreateIngestKey(ctx context.Context, owner, name string) (string, core.Key, error) {
	if _, err := core.NormalizeKeyName(core.IngestKey, name); err != nil {
		return "", core.Key{}, err
	}
	return k.helperKeys.CreateIngestKey(ctx, owner, name)
}

// A refused ingest key's name is shown back in its field, as an API
// key's is, so the owner corrects it rather than typing it again.
func TestIngestKeyRefusalKeepsTheName(t *testing.T) {
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): "a"}}, Inbox: fakeInbox{},
			Phrases: fakePhrases{}, Keys: &namingKeys{}})
	if err != nil {
		t.Fatal(err)
	}
	name := "laptop " + strings.Repeat("x", core.MaxKeyNameLen) + ` & "co"`
	w := postAs(d, "a", "/app/ingest-keys", url.Values{"name": {name}}.Encode())
	if w.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400:\n%s", w.Code, w.Body)
	}
	body := w.Body.String()
	if !strings.Contains(body, `id="e-ingest"`) {
		t.Fatalf("no refusal beside the ingest key's name:\n%s", body)
	}
	field := `<input id="i-name" name="name" value="laptop ` + strings.Repeat("x", core.MaxKeyNameLen) + ` &amp; &#34;co&#34;"`
	if !strings.Contains(body, field) {
		t.Fatalf("the name typed is not kept in its field, want %s in:\n%s", field, body)
	}
	if strings.Contains(body, `id="k-name" name="name" required maxlength="100" value="laptop`) {
		t.Fatal("the ingest key's name is shown in the API key's form")
	}
}
