package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/browser"
	"github.com/earshothq/earshot/helper/facebook"
	"github.com/earshothq/earshot/helper/reddit"
	"github.com/earshothq/earshot/helper/x"
)

// Exit statuses of `earshot helper`, documented in its -h.
const (
	exitPassFailed   = 1 // a pass failed: a platform, the proxy or the server did not answer as needed
	exitSettings     = 2 // bad settings
	exitKeyRefused   = 3 // the server refused the ingest key (401)
	exitNoProxy      = 4 // the deployment has no proxy (GET /proxy 503), or requires the one it has
	exitAccountOwner = 5 // --once: an account needs its owner (sign in again, solve a challenge)
)

// DefaultHelperInterval is the time between passes: reddit's new posts
// of a community rarely pass a page of 100 in ten minutes, and each pass
// costs the account two requests a group of communities.
const DefaultHelperInterval = 10 * time.Minute

const helperUsage = `usage: earshot helper [flags]

Reads the owner's reddit communities, x searches and facebook searches (and
facebook groups) with the owner's session, through the operator's proxy, and
sends the posts to the deployment's POST /ingest. x and facebook are read by a
headless Chromium, as their own web clients.
Every setting is an environment variable with a flag of the same name
(--helper-server, or --server without the prefix).

  EARSHOT_HELPER_SERVER       the deployment's site address (required)
  EARSHOT_HELPER_KEY          the ingest key (svc_ingest_...); its flag
                              --helper-key shows in process lists: prefer this
  EARSHOT_HELPER_KEY_FILE     or a file holding it
  EARSHOT_HELPER_PLATFORMS    comma-separated platforms; default every platform
                              the owner has phrases on that this helper reads
                              (this version reads reddit, x and facebook)
  EARSHOT_HELPER_REDDIT_URL   reddit's base address (https://www.reddit.com),
  EARSHOT_HELPER_X_URL        x's, facebook's: for tests and mirrors
  EARSHOT_HELPER_FACEBOOK_URL
  EARSHOT_HELPER_INTERVAL     time between passes (10m, at least 1m)
  EARSHOT_HELPER_STATE        the checkpoint file (default: earshot/helper-state.json
                              in the user's config directory)
  EARSHOT_HELPER_REDDIT_PACE  least time between two reddit requests (6s); less
                              only with EARSHOT_HELPER_REDDIT_URL set
  EARSHOT_HELPER_X_PACE       least time between two x search pages, a search's
                              later pages included (20s); less only with
                              EARSHOT_HELPER_X_URL set
  EARSHOT_HELPER_X_PAGES      the most pages read per x search (3, 1 to 20): it
                              reads on while every post of a page is new
  EARSHOT_HELPER_FACEBOOK_PACE
                              least time between two facebook pages (30s); less
                              only with EARSHOT_HELPER_FACEBOOK_URL set
  EARSHOT_HELPER_FACEBOOK_GROUPS
                              how many of the facebook groups the owner joined
                              are searched for each phrase (10, 0 to 100; 0 reads
                              no group beyond facebook's posts search)
  EARSHOT_HELPER_BROWSER      the Chromium that reads x and facebook (/usr/bin/chromium)
  EARSHOT_HELPER_DIRECT       true reads from this machine's own address, which
                              only a deployment whose GET /proxy says
                              required: false allows
  --once                      one pass, then exit
  --challenge PLATFORM        open a browser window on x, facebook or reddit with
                              the owner's session, through the proxy; the owner
                              solves the challenge (or signs in) there and closes
                              the tab or presses Enter; the session is saved to the
                              server (PUT /session) and the command exits 0
                              (5 when the browser holds no signed-in session)

Exit status: 0 every batch was accepted (or stopped by SIGINT/SIGTERM);
1 a pass failed; 2 bad settings; 3 the server refused the ingest key;
4 the deployment has no proxy (GET /proxy answered 503 without Retry-After)
or requires it while EARSHOT_HELPER_DIRECT is true; 5 (--once) an account
needs its owner: see the dashboard's Accounts page (--challenge: the browser
held no signed-in session, so nothing was saved).

flags:
`

type helperSettings struct {
	server, key, state     string
	platforms              []string
	redditURL              string
	interval, redditPace   time.Duration
	xPace, facebookPace    time.Duration
	xPages, facebookGroups int
	once, direct           bool
	xURL, facebookURL      string
	browserPath            string
	challenge              string // --challenge: the platform whose session the owner renews
}

func helperCmd(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	s, err := helperFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	client, err := helper.NewClient(s.server, s.key, nil)
	if err != nil {
		return &exitError{exitSettings, err}
	}
	// Caught before the challenge too: a stop there closes its browser.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if s.challenge != "" {
		err := helperChallenge(ctx, s, client, stderr, log)
		if err != nil && ctx.Err() != nil {
			// Stopped wherever the signal found it (asking the server,
			// starting the browser, saving): a stop, not a failure.
			log.Info("stopped: the session was not saved")
			return nil
		}
		return err
	}
	state, err := helper.OpenState(s.state, s.server)
	if err != nil {
		return &exitError{exitSettings, err}
	}
	// Chromium refuses to start as root with its sandbox (containers).
	browsers := &browser.Shared{Options: browser.Options{ExecPath: s.browserPath, NoSandbox: os.Geteuid() == 0}}
	defer browsers.Close()
	r := &helper.Runner{Client: client, State: state, Direct: s.direct, Log: log, Readers: helperReaders(s, browsers, log)}
	for {
		err := r.Pass(ctx)
		if ctx.Err() != nil {
			log.Info("stopped")
			return nil
		}
		switch {
		case errors.Is(err, helper.ErrUnauthorized):
			return &exitError{exitKeyRefused, err}
		case errors.Is(err, helper.ErrNoProxy), errors.Is(err, helper.ErrDirectRefused):
			return &exitError{exitNoProxy, err}
		case err != nil && s.once:
			var p *helper.Paused
			if errors.As(err, &p) && p.NeedsOwner {
				return &exitError{exitAccountOwner, err}
			}
			return &exitError{exitPassFailed, err}
		case err != nil:
			log.Warn("the pass failed; the next one tries again", "err", err, "next", s.interval)
		case s.once:
			return nil
		}
		if err := helper.Sleep(ctx, s.interval); err != nil {
			log.Info("stopped")
			return nil
		}
	}
}

// helperReaders are the readers of s's platforms. x and facebook take
// turns in browsers, the helper's one Chromium: one browser at a time per
// helper, kept open between passes. log is the runner's, for what a
// reader tells the operator (nil: slog's default).
func helperReaders(s helperSettings, browsers *browser.Shared, log *slog.Logger) []helper.Reader {
	var rs []helper.Reader
	on := func(p string) bool { return len(s.platforms) == 0 || slices.Contains(s.platforms, p) }
	if on("reddit") {
		rs = append(rs, &reddit.Reader{BaseURL: s.redditURL, Pace: s.redditPace, Log: log})
	}
	if on("x") {
		rs = append(rs, &x.Reader{BaseURL: s.xURL, Browsers: browsers, Pace: s.xPace, Pages: s.xPages})
	}
	if on("facebook") {
		groups := s.facebookGroups
		if groups == 0 {
			groups = -1 // the reader's 0 is its default
		}
		rs = append(rs, &facebook.Reader{BaseURL: s.facebookURL, Pages: &facebook.Browser{Shared: browsers},
			Pace: s.facebookPace, Groups: groups})
	}
	return rs
}

func helperFlags(args []string, getenv func(string) string, stderr io.Writer) (helperSettings, error) {
	fs := flag.NewFlagSet("earshot helper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, helperUsage)
		fs.PrintDefaults()
	}
	// Each setting's flag is its variable's name in kebab case, as the
	// operator contract has it (--helper-server), and also without the
	// helper- prefix (--server), the shorter name the docs use.
	str := func(name, env, def, doc string) *string {
		if v := getenv(env); v != "" {
			def = v
		}
		p := fs.String(name, def, doc+" ("+env+")")
		fs.StringVar(p, "helper-"+name, def, "the same as --"+name)
		return p
	}
	server := str("server", "EARSHOT_HELPER_SERVER", "", "the deployment's site address")
	keyFile := str("key-file", "EARSHOT_HELPER_KEY_FILE", "", "a file holding the ingest key")
	platforms := str("platforms", "EARSHOT_HELPER_PLATFORMS", "", "comma-separated platforms to read")
	redditURL := str("reddit-url", "EARSHOT_HELPER_REDDIT_URL", "", "reddit's base address")
	xURL := str("x-url", "EARSHOT_HELPER_X_URL", "", "x's base address")
	browserPath := str("browser", "EARSHOT_HELPER_BROWSER", browser.DefaultExecPath, "the Chromium that reads x and facebook")
	fbURL := str("facebook-url", "EARSHOT_HELPER_FACEBOOK_URL", "", "facebook's base address")
	interval := str("interval", "EARSHOT_HELPER_INTERVAL", DefaultHelperInterval.String(), "time between passes")
	state := str("state", "EARSHOT_HELPER_STATE", "", "the checkpoint file")
	pace := str("reddit-pace", "EARSHOT_HELPER_REDDIT_PACE", reddit.DefaultPace.String(), "least time between two reddit requests")
	xPace := str("x-pace", "EARSHOT_HELPER_X_PACE", x.DefaultPace.String(), "least time between two x search pages")
	xPages := str("x-pages", "EARSHOT_HELPER_X_PAGES", strconv.Itoa(x.DefaultPages), "the most pages read per x search")
	fbPace := str("facebook-pace", "EARSHOT_HELPER_FACEBOOK_PACE", facebook.DefaultPace.String(), "least time between two facebook pages")
	fbGroups := str("facebook-groups", "EARSHOT_HELPER_FACEBOOK_GROUPS", strconv.Itoa(facebook.DefaultGroups), "how many joined facebook groups are searched (0: none)")
	direct := str("direct", "EARSHOT_HELPER_DIRECT", "false", "read without the proxy when the deployment allows it")
	key := fs.String("helper-key", "", "the ingest key (EARSHOT_HELPER_KEY); on the command line it shows in process lists: prefer the variable or --key-file")
	once := fs.Bool("once", false, "make one pass and exit")
	challenge := fs.String("challenge", "", "open a browser window on this platform (x, facebook, reddit) to solve a challenge or sign in, then save the session")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helperSettings{}, err
		}
		return helperSettings{}, &exitError{exitSettings, err}
	}
	if fs.NArg() > 0 {
		return helperSettings{}, usageErr("unexpected argument %q", fs.Arg(0))
	}
	s := helperSettings{server: *server, redditURL: *redditURL, xURL: *xURL, facebookURL: *fbURL, once: *once, browserPath: *browserPath}
	if s.challenge = strings.ToLower(*challenge); s.challenge != "" && platformSites[s.challenge] == "" {
		return s, usageErr("--challenge: unknown platform %q (x, facebook, reddit)", *challenge)
	}
	if s.server == "" {
		return s, usageErr("EARSHOT_HELPER_SERVER (--server) is required: the deployment's site address")
	}
	// A flag wins over its variable: the key on the command line over a
	// key file named in the environment, a key file on the command line
	// over the key in the environment.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[strings.TrimPrefix(f.Name, "helper-")] = true })
	if given["key"] && given["key-file"] {
		return s, usageErr("--helper-key and --key-file both give the key: give one")
	}
	s.key = strings.TrimSpace(cmp.Or(*key, getenv("EARSHOT_HELPER_KEY")))
	if *keyFile != "" && !given["key"] {
		b, err := os.ReadFile(*keyFile)
		if err != nil {
			return s, usageErr("EARSHOT_HELPER_KEY_FILE: %v", err)
		}
		s.key = strings.TrimSpace(string(b))
	}
	if !strings.HasPrefix(s.key, "svc_ingest_") {
		// The value is not echoed: it may be some other secret.
		return s, usageErr("EARSHOT_HELPER_KEY or EARSHOT_HELPER_KEY_FILE must give an ingest key (svc_ingest_...)")
	}
	for _, p := range strings.Split(*platforms, ",") {
		switch p = strings.TrimSpace(strings.ToLower(p)); p {
		case "":
		case "reddit", "x", "facebook":
			s.platforms = append(s.platforms, p)
		default:
			return s, usageErr("EARSHOT_HELPER_PLATFORMS: unknown platform %q (reddit, x, facebook)", p)
		}
	}
	for name, u := range map[string]string{"EARSHOT_HELPER_REDDIT_URL": s.redditURL, "EARSHOT_HELPER_X_URL": s.xURL, "EARSHOT_HELPER_FACEBOOK_URL": s.facebookURL} {
		if pu, err := url.Parse(u); u != "" && (err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "") {
			return s, usageErr("%s must be an http(s) address", name)
		}
	}
	var err error
	if s.interval, err = time.ParseDuration(*interval); err != nil || s.interval < time.Minute {
		return s, usageErr("EARSHOT_HELPER_INTERVAL must be a duration of at least 1m, like 10m")
	}
	if s.redditPace, err = time.ParseDuration(*pace); err != nil || s.redditPace <= 0 {
		return s, usageErr("EARSHOT_HELPER_REDDIT_PACE must be a positive duration, like 6s")
	}
	if s.redditPace < reddit.DefaultPace && s.redditURL == "" {
		return s, usageErr("EARSHOT_HELPER_REDDIT_PACE under %s is for tests and mirrors: set EARSHOT_HELPER_REDDIT_URL too", reddit.DefaultPace)
	}
	// x and facebook lock accounts that read faster than their own web
	// clients: a shorter pace is for a mirror or a test server only.
	for _, p := range []struct {
		name, value, base string
		floor             time.Duration
		out               *time.Duration
	}{
		{"EARSHOT_HELPER_X_PACE", *xPace, s.xURL, x.DefaultPace, &s.xPace},
		{"EARSHOT_HELPER_FACEBOOK_PACE", *fbPace, s.facebookURL, facebook.DefaultPace, &s.facebookPace},
	} {
		d, err := time.ParseDuration(p.value)
		if err != nil || d <= 0 {
			return s, usageErr("%s must be a positive duration, like %s", p.name, p.floor)
		}
		if d < p.floor && p.base == "" {
			return s, usageErr("%s under %s is for tests and mirrors: set %s too", p.name, p.floor, strings.TrimSuffix(p.name, "_PACE")+"_URL")
		}
		*p.out = d
	}
	if s.xPages, err = strconv.Atoi(strings.TrimSpace(*xPages)); err != nil || s.xPages < 1 || s.xPages > 20 {
		return s, usageErr("EARSHOT_HELPER_X_PAGES must be a number of pages from 1 to 20")
	}
	if s.facebookGroups, err = strconv.Atoi(strings.TrimSpace(*fbGroups)); err != nil || s.facebookGroups < 0 || s.facebookGroups > 100 {
		return s, usageErr("EARSHOT_HELPER_FACEBOOK_GROUPS must be a number of groups from 0 (none) to 100")
	}
	switch strings.ToLower(*direct) {
	case "true", "1", "yes":
		s.direct = true
	case "false", "0", "no", "":
	default:
		return s, usageErr("EARSHOT_HELPER_DIRECT must be true or false")
	}
	s.state = *state
	if s.state == "" {
		if s.state, err = helper.DefaultStatePath(); err != nil {
			return s, usageErr("EARSHOT_HELPER_STATE is unset and there is no user config directory: %v", err)
		}
	}
	return s, nil
}
