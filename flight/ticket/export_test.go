package ticket

// Claims codec, for FuzzDecodeClaims.
var (
	AppendClaims = appendClaims
	DecodeClaims = decodeClaims
)
