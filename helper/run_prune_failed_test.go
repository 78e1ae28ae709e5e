package helper_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// failingKeeper is a keeper whose read fails before it reads anything,
// as a read stopped by the platform (a paused account, a blocked
// address) does.
type failingKeeper struct{ keeper }

func (failingKeeper) Read(context.Context, helper.In, func(helper.Post, helper.Mark) error) error {
	return errors.New("x: searching: the platform refused")
}

// A pass whose read of a platform failed drops none of its checkpoints,
// those of phrases the owner no longer lists included: the read did not
// end, so nothing says which of them it still needs.
func TestFailedReadKeepsCheckpoints(t *testing.T) {
	srv := fakeDeployment(t, routes{
		"/phrases": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"phrases":["p1"]}`) },
	})
	st, err := helper.OpenState(filepath.Join(t.TempDir(), "state.json"), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(map[string]string{"x:search:p0": "7"}); err != nil {
		t.Fatal(err)
	}
	r := &helper.Runner{Client: newClient(t, srv), State: st, Direct: true, Readers: []helper.Reader{failingKeeper{}}}
	if err := r.Pass(context.Background()); err == nil {
		t.Fatal("the pass succeeded")
	}
	if got := st.Get("x:search:p0"); got != "7" {
		t.Fatalf("after a failed read the checkpoint is %q, want 7", got)
	}
}
