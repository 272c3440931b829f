package authz

import "strconv"

// FailureReason says why a credential was refused, for a metric label only:
// the caller counts it (lakegate_authn_failures_total{reason}) and still
// answers every failure with the same ErrUnauthenticated. The set is finite
// and its names are stable.
type FailureReason uint8

// Failure reasons. ReasonNone is the reason of a success.
const (
	ReasonNone FailureReason = iota
	// ReasonUnknownToken: a static token that matches no hash (or a Basic
	// id that does not own it).
	ReasonUnknownToken
	// ReasonMalformed: a JWT that is oversized or does not decode (segments,
	// base64url, JSON, duplicate claim names).
	ReasonMalformed
	// ReasonBadSignature: the signature does not verify with the key named
	// by the token.
	ReasonBadSignature
	// ReasonUnknownKey: the issuer publishes no key with the token's kid,
	// even after the (bounded) refresh.
	ReasonUnknownKey
	// ReasonBadIssuer: no configured provider has the token's iss.
	ReasonBadIssuer
	// ReasonBadAudience: the token's aud names no provider of its issuer,
	// or more than one.
	ReasonBadAudience
	// ReasonExpired: exp is past, beyond the clock skew.
	ReasonExpired
	// ReasonNotYetValid: nbf or iat is in the future (beyond the clock skew).
	ReasonNotYetValid
	// ReasonBadAlgorithm: alg is not allowed for the provider, or does not
	// fit the key's type or the key's own alg/use.
	ReasonBadAlgorithm
	// ReasonBadClaims: a claim has the wrong type, exp or the user claim is
	// missing, the user claim is not a valid principal id, an email user's
	// email_verified is false, or the groups claim is not a list of strings.
	ReasonBadClaims
	// ReasonUnknownTenant: the tenant claim names a tenant the provider
	// does not serve.
	ReasonUnknownTenant
	// ReasonUnknownUser: a valid token whose user the map does not admit
	// (not listed and users are not auto-created, listed under another
	// tenant or role, or granted no namespace).
	ReasonUnknownUser
	// ReasonKeyFetch: the issuer's keys could not be fetched or read.
	ReasonKeyFetch

	numReasons
)

var reasonNames = [numReasons]string{
	ReasonNone:          "none",
	ReasonUnknownToken:  "unknown_token",
	ReasonMalformed:     "malformed",
	ReasonBadSignature:  "bad_signature",
	ReasonUnknownKey:    "unknown_key",
	ReasonBadIssuer:     "bad_issuer",
	ReasonBadAudience:   "bad_audience",
	ReasonExpired:       "expired",
	ReasonNotYetValid:   "not_yet_valid",
	ReasonBadAlgorithm:  "bad_algorithm",
	ReasonBadClaims:     "bad_claims",
	ReasonUnknownTenant: "unknown_tenant",
	ReasonUnknownUser:   "unknown_user",
	ReasonKeyFetch:      "key_fetch",
}

// String returns the metric label, for example "bad_audience".
func (r FailureReason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "FailureReason(" + strconv.Itoa(int(r)) + ")"
}

// FailureReasons returns every failure reason (ReasonNone excluded), so a
// metric can create all its label values up front.
func FailureReasons() []FailureReason {
	out := make([]FailureReason, 0, numReasons-1)
	for r := ReasonNone + 1; r < numReasons; r++ {
		out = append(out, r)
	}
	return out
}
