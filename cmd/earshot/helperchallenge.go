package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/browser"
)

// helperStdin is where `earshot helper --challenge` waits for Enter.
var helperStdin io.Reader = os.Stdin

// challengeHeadless hides the challenge browser's window: tests only, as
// an owner must see the window to solve the challenge.
var challengeHeadless bool

// platformSites are the pages a challenge opens: each platform's home,
// which sends a challenged or signed-out session to its challenge or
// login page.
var platformSites = map[string]string{
	"x":        "https://x.com",
	"facebook": "https://www.facebook.com",
	"reddit":   "https://www.reddit.com",
}

// helperChallenge opens a visible Chromium on the platform's site with
// the owner's cookies, through the operator's proxy, and waits for the
// owner to solve the challenge there and close the tab (or press Enter);
// it then saves the site's cookies as the owner's session (PUT
// /session). Recovery is not reported here: the next pass's normal read
// reports it through POST /account-status.
func helperChallenge(ctx context.Context, s helperSettings, client *helper.Client, stderr io.Writer, log *slog.Logger) error {
	p := core.Platform(s.challenge)
	site := map[string]string{"x": s.xURL, "facebook": s.facebookURL, "reddit": s.redditURL}[s.challenge]
	cookieURL := site
	if site == "" {
		site = platformSites[s.challenge]
	}
	px, err := client.Proxy(ctx)
	if err != nil {
		return helperExit(err)
	}
	_, via, err := helper.PlatformClient(px, s.direct)
	if err != nil {
		return helperExit(err)
	}
	o := browser.Options{ExecPath: s.browserPath, NoSandbox: os.Geteuid() == 0, Visible: !challengeHeadless}
	if via {
		if o.Proxy, err = url.Parse(px.Proxy.Server); err != nil {
			return &exitError{exitNoProxy, fmt.Errorf("the proxy's address does not parse: %w", err)}
		}
		if px.Proxy.Username != "" || px.Proxy.Password != "" {
			o.Proxy.User = url.UserPassword(px.Proxy.Username, px.Proxy.Password)
		}
	}
	var cookies []core.Cookie
	switch raw, err := client.Session(ctx, s.challenge); {
	case errors.Is(err, helper.ErrNoSession):
		// Signing in from nothing in the window is a way to make one.
	case err != nil:
		return helperExit(err)
	default:
		if cookies, err = core.ParseCookieJar(p, raw); err != nil {
			log.Warn("the stored session does not parse: the window opens signed out", "err", err)
		}
	}
	b, err := browser.Start(ctx, o)
	if err != nil {
		return &exitError{exitPassFailed, err}
	}
	defer b.Close()
	done := make(chan struct{})
	go func() {
		// Enter ends the visit. Input at its end (no terminal: a desktop
		// launcher, </dev/null) is no answer from the owner: the visit
		// then lasts until the tab closes.
		if _, err := bufio.NewReader(helperStdin).ReadString('\n'); err == nil {
			close(done)
		}
	}()
	fmt.Fprintf(stderr, "A browser window opened on %s with your %s session.\n"+
		"Solve the challenge or sign in there; when the site shows your feed, close the tab or press Enter here.\n", site, s.challenge)
	got, err := b.Visit(ctx, browser.Request{URL: site, Cookies: cookies, CookieURL: cookieURL}, done)
	if err != nil {
		if ctx.Err() != nil {
			log.Info("stopped: the session was not saved")
			return nil
		}
		return &exitError{exitPassFailed, err}
	}
	if cookieURL != "" {
		// A mirror or test site sets its cookies on its own host: they
		// are the platform's.
		host := strings.TrimPrefix(mustHost(cookieURL), ".")
		for i := range got {
			if strings.TrimPrefix(got[i].Domain, ".") == host {
				got[i].Domain = "." + core.PlatformCookieDomains(p)[0]
			}
		}
	}
	kept, err := core.ParseCookieJar(p, core.EncodeCookieJar(got))
	if err != nil {
		return &exitError{exitAccountOwner, fmt.Errorf("the browser holds no signed-in %s session, nothing was saved: %w", s.challenge, err)}
	}
	saved, err := client.SaveSession(ctx, s.challenge, kept)
	if err != nil {
		return helperExit(err)
	}
	fmt.Fprintf(stderr, "Saved your %s session (%d cookies). The next pass reads with it and reports the account's recovery;\n"+
		"for a challenge, also press \"Mark resolved\" on the dashboard's challenge page.\n", s.challenge, saved.Cookies)
	return nil
}

func mustHost(u string) string {
	pu, _ := url.Parse(u) // helperFlags has checked it
	return pu.Hostname()
}

// helperExit maps the errors every helper command stops on to their
// exit statuses.
func helperExit(err error) error {
	switch {
	case errors.Is(err, helper.ErrUnauthorized):
		return &exitError{exitKeyRefused, err}
	case errors.Is(err, helper.ErrNoProxy), errors.Is(err, helper.ErrDirectRefused):
		return &exitError{exitNoProxy, err}
	}
	return &exitError{exitPassFailed, err}
}
