package gormstore

import (
	"testing"
	"testing/fstest"
)

// Both dialects have the same steps, numbered from 1 with no gaps, each
// named by its first line.
func TestMigrationFiles(t *testing.T) {
	lite, pg := steps[false], steps[true]
	if len(lite) != len(pg) || len(lite) == 0 {
		t.Fatalf("%d steps on SQLite, %d on Postgres", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].version != i+1 || lite[i].name != pg[i].name || lite[i].name == "" {
			t.Errorf("step %d: SQLite %d %q, Postgres %d %q", i+1, lite[i].version, lite[i].name, pg[i].version, pg[i].name)
		}
	}
	for name, files := range map[string]fstest.MapFS{
		"a gap":      {"migrations/x/0001_a.sql": {Data: []byte("-- a\n")}, "migrations/x/0003_c.sql": {Data: []byte("-- c\n")}},
		"no number":  {"migrations/x/a.sql": {Data: []byte("-- a\n")}},
		"no name":    {"migrations/x/0001_a.sql": {Data: []byte("CREATE TABLE a (b TEXT);\n")}},
		"from two":   {"migrations/x/0002_b.sql": {Data: []byte("-- b\n")}},
		"empty file": {"migrations/x/0001_a.sql": {Data: []byte("")}},
	} {
		if _, err := loadSteps(files, "x"); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	got, err := loadSteps(fstest.MapFS{"migrations/x/0001_a.sql": {Data: []byte("-- the name\n-- why\n\nCREATE TABLE a (b TEXT);\n")}}, "x")
	if err != nil || len(got) != 1 || got[0].name != "the name" || got[0].sql != "CREATE TABLE a (b TEXT);\n" {
		t.Fatalf("loadSteps = %+v, %v", got, err)
	}
}
