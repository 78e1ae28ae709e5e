package app

import (
	"cmp"
	"slices"
	"time"

	"github.com/earshothq/earshot/ports"
)

// groupTarget is how many posts a group's read is planned to hold: most of
// one page of 100, so a group that was a little busier than its estimate
// still fits in one request.
const groupTarget = 80

// unknownShare is the part of a group a community of unknown rate is
// planned to take: a new community shares a read with at most this many
// others until its rate is known.
const unknownShare = 10

// planItem is one listing of one community to read.
type planItem struct {
	community string
	since     time.Time // posts after it are wanted
	rate      float64   // estimated posts per hour; negative when unknown
	solo      bool      // read alone whatever its rate
}

// planGroup is communities read together, and the earliest since among
// them, which is how far back the merged listing must go.
type planGroup struct {
	items []planItem
	since time.Time
	rate  float64 // the sum of known rates
	guess int     // how many have an unknown rate
}

// cost is how many posts a read of the group with one more member would
// walk through: every member's posts back to the earliest since.
func (g *planGroup) cost(it planItem, now time.Time, target float64) float64 {
	since := g.since
	if it.since.Before(since) {
		since = it.since
	}
	rate, guess := g.rate, g.guess
	if it.rate < 0 {
		guess++
	} else {
		rate += it.rate
	}
	return rate*now.Sub(since).Hours() + float64(guess)*target/unknownShare
}

// planGroups packs the communities of one listing into reads: first fit,
// the oldest since first, each read planned to walk at most target posts
// and to hold at most maxGroup communities (ports.MaxRedditGroup when 0). A community busier
// than target alone is read alone, and paged. Groups come out oldest since
// first, so what waited goes first.
func planGroups(items []planItem, now time.Time, target float64, maxGroup int) []planGroup {
	if maxGroup <= 0 || maxGroup > ports.MaxRedditGroup {
		maxGroup = ports.MaxRedditGroup
	}
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b planItem) int {
		if c := a.since.Compare(b.since); c != 0 {
			return c
		}
		return cmp.Compare(b.rate, a.rate)
	})
	var groups []planGroup
	var open []int // groups that may take more
	for _, it := range items {
		alone := planGroup{since: it.since}
		if it.solo || alone.cost(it, now, target) > target {
			groups = append(groups, planGroup{items: []planItem{it}, since: it.since, rate: max(it.rate, 0)})
			continue
		}
		placed := false
		for k, gi := range open {
			g := &groups[gi]
			if len(g.items) >= maxGroup {
				continue
			}
			if g.cost(it, now, target) <= target {
				g.items = append(g.items, it)
				if it.since.Before(g.since) {
					g.since = it.since
				}
				if it.rate < 0 {
					g.guess++
				} else {
					g.rate += it.rate
				}
				if len(g.items) == maxGroup {
					open = slices.Delete(open, k, k+1)
				}
				placed = true
				break
			}
		}
		if !placed {
			g := planGroup{items: []planItem{it}, since: it.since}
			if it.rate < 0 {
				g.guess = 1
			} else {
				g.rate = it.rate
			}
			groups = append(groups, g)
			open = append(open, len(groups)-1)
		}
	}
	slices.SortStableFunc(groups, func(a, b planGroup) int { return a.since.Compare(b.since) })
	return groups
}
