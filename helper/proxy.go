package helper

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// ErrDirectRefused: the helper was told to read without the proxy while
// the deployment requires it.
var ErrDirectRefused = errors.New("the deployment requires its proxy (GET /proxy says required: true): reading directly is refused")

// PlatformClient returns the HTTP client every platform request of a
// pass goes through, under the spec's rule: "Helpers must use the
// operator's proxy by default and refuse to run without one unless the
// operator has turned the requirement off." The proxy is set on the
// transport as a fixed address, with its credentials, never taken from
// the environment and never bypassed for any host: when it fails, the
// request fails, and nothing is sent directly. direct asks to read
// without it, which only a deployment answering required: false allows.
//
// The client follows no redirect: a platform's redirect (to a login
// page, a checkpoint) is an answer about the account, reported as it is.
func PlatformClient(p ProxyInfo, direct bool) (*http.Client, bool, error) {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   2,
		ForceAttemptHTTP2:     true,
	}
	via := false
	switch {
	case direct && p.Required:
		return nil, false, ErrDirectRefused
	case direct:
		// The operator turned the requirement off and the owner chose to read from their own address.
	default:
		u, err := url.Parse(p.Proxy.Server)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5" && u.Scheme != "socks5h") {
			// Not echoed whole: a malformed address may hold credentials.
			return nil, false, fmt.Errorf("the proxy the server names is not a usable address (scheme %q)", schemeOf(u))
		}
		if p.Proxy.Username != "" || p.Proxy.Password != "" {
			u.User = url.UserPassword(p.Proxy.Username, p.Proxy.Password)
		}
		tr.Proxy = http.ProxyURL(u)
		via = true
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, via, nil
}

func schemeOf(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Scheme
}
