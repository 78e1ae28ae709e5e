package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The top-level usage's admin line names every subject admin's own
// usage lists, so an operator finds each from `earshot help`.
func TestUsageNamesEveryAdminSubject(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	var help, adminHelp bytes.Buffer
	if err := run(context.Background(), []string{"help"}, getenv, &help, &help); err != nil {
		t.Fatal(err)
	}
	_ = run(context.Background(), []string{"admin"}, getenv, &adminHelp, &adminHelp)
	line := regexp.MustCompile(`(?m)^  admin +(.+)$`).FindStringSubmatch(help.String())
	if line == nil {
		t.Fatalf("no admin line in the usage:\n%s", help.String())
	}
	named := strings.FieldsFunc(line[1], func(r rune) bool { return r == ',' || r == ' ' })
	var subjects []string
	for _, m := range regexp.MustCompile(`(?m)^  earshot admin (\S+) `).FindAllStringSubmatch(adminHelp.String(), -1) {
		if !slices.Contains(subjects, m[1]) {
			subjects = append(subjects, m[1])
		}
	}
	if len(subjects) == 0 {
		t.Fatalf("no subjects in admin's usage:\n%s", adminHelp.String())
	}
	for _, s := range subjects {
		if !slices.Contains(named, s) {
			t.Errorf("the usage's admin line %q leaves out %q", line[0], s)
		}
	}
}
