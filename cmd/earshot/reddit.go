package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/earshothq/earshot/server"
)

// redditStatus prints one line per watched community: the way its last
// read was answered, the last time both listings were read, the last
// refusal or failure, how far behind the archive was, and how old its
// checkpoint is.
func redditStatus(ctx context.Context, con *server.Console, w io.Writer) error {
	rows, err := con.Reddit.Status(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMMUNITY\tPHRASES\tSOURCE\tLAST SUCCESS\tBEHIND\tARCHIVE LAG\tLAST ERROR")
	for _, r := range rows {
		source := r.LastVia
		if source == "" {
			source = "-"
		}
		lastErr := "-"
		if r.LastError != "" {
			lastErr = stamp(r.LastErrorAt) + " " + oneLine(r.LastError)
		}
		fmt.Fprintf(tw, "r/%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Community, r.Phrases, source, stamp(r.LastSuccessAt),
			span(r.Behind), span(r.ArchiveLag), lastErr)
	}
	return tw.Flush()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

func span(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Second).String()
}

// oneLine keeps a table row on one line whatever an error says.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return s
}
