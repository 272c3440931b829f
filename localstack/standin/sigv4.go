package standin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SigV4 constants.
const (
	algorithm       = "AWS4-HMAC-SHA256"
	amzDateFormat   = "20060102T150405Z"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	maxSkew         = 15 * time.Minute
	maxPresignTTL   = 7 * 24 * time.Hour
)

// Credentials are the one key pair the stand-in accepts.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

// sigRequest is what verification extracts from a request.
type sigRequest struct {
	accessKey     string
	date          string // yyyymmdd from the credential scope
	region        string
	service       string
	amzDate       time.Time
	signedHeaders []string
	signature     string
	payloadHash   string // what the client declared (hex, UNSIGNED-PAYLOAD, STREAMING-...)
	presigned     bool
}

var errNoAuth = errors.New("request is not signed")

// verify checks r's SigV4 signature (Authorization header or presigned
// query) against creds and region at time now. It returns the declared
// payload hash so the caller can check the body.
func verify(r *http.Request, creds Credentials, region string, now time.Time) (string, error) {
	var sr sigRequest
	var err error
	q := r.URL.Query()
	switch {
	case r.Header.Get("Authorization") != "":
		if q.Get("X-Amz-Signature") != "" {
			return "", errors.New("both an Authorization header and a presigned signature")
		}
		sr, err = parseHeaderAuth(r)
	case q.Get("X-Amz-Signature") != "":
		sr, err = parsePresigned(r, now)
	default:
		return "", errNoAuth
	}
	if err != nil {
		return "", err
	}
	if sr.accessKey != creds.AccessKeyID {
		return "", errors.New("unknown access key")
	}
	if sr.region != region || sr.service != "s3" {
		return "", fmt.Errorf("credential scope %s/%s, want %s/s3", sr.region, sr.service, region)
	}
	if sr.amzDate.Format("20060102") != sr.date {
		return "", errors.New("credential scope date differs from X-Amz-Date")
	}
	if !sr.presigned {
		if d := now.Sub(sr.amzDate); d > maxSkew || d < -maxSkew {
			return "", errors.New("request time too skewed")
		}
	}
	hasHost := false
	signed := make(map[string]bool, len(sr.signedHeaders))
	for _, h := range sr.signedHeaders {
		signed[h] = true
		hasHost = hasHost || h == "host"
	}
	if !hasHost {
		return "", errors.New("host is not a signed header")
	}
	// Every x-amz-* header (and Content-MD5) the request carries must be
	// signed, or an intermediary could add one (x-amz-copy-source, ...).
	for name := range r.Header {
		l := strings.ToLower(name)
		if (strings.HasPrefix(l, "x-amz-") || l == "content-md5") && !signed[l] {
			return "", fmt.Errorf("header %s is not signed", l)
		}
	}
	creq := canonicalRequest(r, sr)
	sts := strings.Join([]string{
		algorithm,
		sr.amzDate.Format(amzDateFormat),
		sr.date + "/" + sr.region + "/" + sr.service + "/aws4_request",
		hexSHA256([]byte(creq)),
	}, "\n")
	key := signingKey(creds.SecretAccessKey, sr.date, sr.region, sr.service)
	want := hex.EncodeToString(hmacSHA256(key, []byte(sts)))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(sr.signature))) {
		return "", errors.New("signature does not match")
	}
	return sr.payloadHash, nil
}

func parseHeaderAuth(r *http.Request) (sigRequest, error) {
	var sr sigRequest
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, algorithm+" ")
	if !ok {
		return sr, errors.New("unsupported authorization scheme")
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return sr, errors.New("malformed Authorization header")
		}
		fields[k] = v
	}
	if err := sr.parseCredential(fields["Credential"]); err != nil {
		return sr, err
	}
	sr.signedHeaders = strings.Split(fields["SignedHeaders"], ";")
	sr.signature = fields["Signature"]
	t, err := time.Parse(amzDateFormat, r.Header.Get("X-Amz-Date"))
	if err != nil {
		return sr, errors.New("missing or malformed X-Amz-Date")
	}
	sr.amzDate = t
	sr.payloadHash = r.Header.Get("X-Amz-Content-Sha256")
	if sr.payloadHash == "" {
		return sr, errors.New("missing X-Amz-Content-Sha256")
	}
	return sr, nil
}

func parsePresigned(r *http.Request, now time.Time) (sigRequest, error) {
	var sr sigRequest
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != algorithm {
		return sr, errors.New("unsupported X-Amz-Algorithm")
	}
	if err := sr.parseCredential(q.Get("X-Amz-Credential")); err != nil {
		return sr, err
	}
	sr.presigned = true
	sr.signedHeaders = strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	sr.signature = q.Get("X-Amz-Signature")
	t, err := time.Parse(amzDateFormat, q.Get("X-Amz-Date"))
	if err != nil {
		return sr, errors.New("missing or malformed X-Amz-Date")
	}
	sr.amzDate = t
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > maxPresignTTL {
		return sr, errors.New("missing or malformed X-Amz-Expires")
	}
	if now.Before(t.Add(-maxSkew)) || now.After(t.Add(time.Duration(secs)*time.Second)) {
		return sr, errors.New("presigned URL expired or not yet valid")
	}
	sr.payloadHash = q.Get("X-Amz-Content-Sha256")
	if sr.payloadHash == "" {
		sr.payloadHash = unsignedPayload
	}
	return sr, nil
}

func (sr *sigRequest) parseCredential(c string) error {
	parts := strings.Split(c, "/")
	if len(parts) != 5 || parts[4] != "aws4_request" {
		return errors.New("malformed credential scope")
	}
	sr.accessKey, sr.date, sr.region, sr.service = parts[0], parts[1], parts[2], parts[3]
	return nil
}

// canonicalRequest builds the SigV4 canonical request for S3 (paths are
// encoded once, not twice).
func canonicalRequest(r *http.Request, sr sigRequest) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	p := r.URL.Path
	if p == "" {
		p = "/"
	}
	b.WriteString(uriEncode(p, false))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery))
	b.WriteByte('\n')
	for _, h := range sr.signedHeaders {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(sr.signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(sr.payloadHash)
	return b.String()
}

func headerValue(r *http.Request, h string) string {
	var vals []string
	switch h {
	case "host":
		vals = []string{r.Host}
	case "content-length":
		if v := r.Header.Values(h); len(v) > 0 {
			vals = v
		} else if r.ContentLength >= 0 {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	default:
		vals = r.Header.Values(h)
	}
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

func canonicalQuery(raw string) string {
	type kv struct{ k, v string }
	var pairs []kv
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		if k == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, kv{uriEncode(k, true), uriEncode(v, true)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// uriEncode is SigV4's UriEncode: every byte but A-Z a-z 0-9 - _ . ~ is
// %XX-encoded; '/' too unless it separates path segments.
func uriEncode(s string, encodeSlash bool) string {
	const hexdig = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && !encodeSlash) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexdig[c>>4])
		b.WriteByte(hexdig[c&15])
	}
	return b.String()
}

func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), []byte(date))
	k = hmacSHA256(k, []byte(region))
	k = hmacSHA256(k, []byte(service))
	return hmacSHA256(k, []byte("aws4_request"))
}

func hmacSHA256(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
