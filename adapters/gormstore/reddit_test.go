package gormstore_test

import (
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/testkit/storetest"
)

func TestRedditStore(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.RunReddit(t, gormstore.NewRedditStore(open(t, "sqlite://:memory:")))
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.RunReddit(t, gormstore.NewRedditStore(open(t, PostgresURL(t))))
	})
}
