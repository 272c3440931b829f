package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// commandVersion is the envelope version written by EncodeCommand.
const commandVersion = 1

type envelope struct {
	V    int             `json:"v"`
	Type CommandType     `json:"type"`
	Body json.RawMessage `json:"body"`
}

// EncodeCommand serializes cmd as {"v":1,"type":<number>,"body":{…}}. The
// bytes are deterministic for a given command value.
func EncodeCommand(cmd Command) ([]byte, error) {
	if cmd == nil {
		return nil, errf(ErrInvalidCommand, "nil command")
	}
	body, err := json.Marshal(cmd)
	if err != nil {
		return nil, errf(ErrInvalidCommand, err.Error())
	}
	// What json.Marshal(envelope{commandVersion, type, body}) writes, built
	// directly: json.Marshal's output is compact and escaped already, so
	// embedding it as a json.RawMessage leaves it unchanged.
	b := make([]byte, 0, len(canonicalPrefix)+len(`65535,"body":}`)+len(body))
	b = append(b, canonicalPrefix...)
	b = strconv.AppendUint(b, uint64(cmd.commandType()), 10)
	b = append(b, `,"body":`...)
	b = append(b, body...)
	return append(b, '}'), nil
}

// DecodeCommand parses bytes written by EncodeCommand. Unknown versions,
// types and fields, and trailing data, are rejected with an error wrapping
// ErrInvalidCommand. Content rules are checked by Apply, not here.
//
// Bytes in the exact form EncodeCommand writes are decoded in one pass: the
// envelope's prefix is matched byte for byte and the body is decoded straight
// from the input. Anything else, including every input that fails to decode,
// goes through the general two-pass decoder, so results and errors are the
// same either way.
func DecodeCommand(b []byte) (Command, error) {
	if c, ok := decodeCanonical(b); ok {
		return c, nil
	}
	return decodeGeneral(b)
}

// decodeGeneral decodes the envelope and then its body.
func decodeGeneral(b []byte) (Command, error) {
	var env envelope
	if err := strict(b, &env); err != nil {
		return nil, errf(ErrInvalidCommand, "envelope: "+err.Error())
	}
	if env.V != commandVersion {
		return nil, errf(ErrInvalidCommand, "unsupported version "+itoa(uint64(max(env.V, 0))))
	}
	if len(env.Body) == 0 || string(env.Body) == "null" {
		return nil, errf(ErrInvalidCommand, "missing body")
	}
	c, known, err := decodeTyped(env.Type, env.Body, false)
	if !known {
		return nil, errf(ErrInvalidCommand, "unknown command type "+itoa(uint64(env.Type)))
	}
	return c, err
}

// canonicalPrefix is how every envelope written by EncodeCommand starts; the
// type number and then "body": follow.
const canonicalPrefix = `{"v":1,"type":`

// decodeCanonical decodes b when it is exactly {"v":1,"type":N,"body":{…}}
// followed only by JSON whitespace, with N a known type number in canonical
// form. It reports false, and the caller falls back to the general decoder,
// for any other input and on any decoding error.
func decodeCanonical(b []byte) (Command, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(canonicalPrefix))
	if !ok {
		return nil, false
	}
	n, i := 0, 0
	for ; i < len(rest) && i < 6 && '0' <= rest[i] && rest[i] <= '9'; i++ {
		n = n*10 + int(rest[i]-'0')
	}
	if i == 0 || (i > 1 && rest[0] == '0') || n > 0xFFFF {
		return nil, false
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"body":{`))
	if !ok {
		return nil, false
	}
	// Keep the body's opening brace: the body starts len(`{`) back.
	body := b[len(b)-len(rest)-1:]
	c, known, err := decodeTyped(CommandType(n), body, true)
	if !known || err != nil {
		return nil, false
	}
	return c, true
}

// decodeTyped strictly decodes b as the body of a command of type t. With
// closing set, b is the tail of an envelope: the body must be followed by the
// envelope's closing brace and then only whitespace. known is false for an
// unknown type.
func decodeTyped(t CommandType, b []byte, closing bool) (c Command, known bool, err error) {
	c, err = decodeBodyOf(t, b, closing)
	return c, !errors.Is(err, errUnknownType), err
}

var errUnknownType = errors.New("unknown command type")

func decodeBodyOf(t CommandType, b []byte, closing bool) (Command, error) {
	switch t {
	case TypeCreateCatalog:
		return decodeBody[CreateCatalog](b, closing)
	case TypeCreateSchema:
		return decodeBody[CreateSchema](b, closing)
	case TypeCreateTable:
		return decodeBody[CreateTable](b, closing)
	case TypeDropObject:
		return decodeBody[DropObject](b, closing)
	case TypeRenameObject:
		return decodeBody[RenameObject](b, closing)
	case TypeAddColumn:
		return decodeBody[AddColumn](b, closing)
	case TypeSetOwner:
		return decodeBody[SetOwner](b, closing)
	case TypeCreateUser:
		return decodeBody[CreateUser](b, closing)
	case TypeDropUser:
		return decodeBody[DropUser](b, closing)
	case TypeCreateGroup:
		return decodeBody[CreateGroup](b, closing)
	case TypeDropGroup:
		return decodeBody[DropGroup](b, closing)
	case TypeAddGroupMembers:
		return decodeBody[AddGroupMembers](b, closing)
	case TypeRemoveGroupMembers:
		return decodeBody[RemoveGroupMembers](b, closing)
	case TypeCreateRole:
		return decodeBody[CreateRole](b, closing)
	case TypeDropRole:
		return decodeBody[DropRole](b, closing)
	case TypeGrantPrivileges:
		return decodeBody[GrantPrivileges](b, closing)
	case TypeRevokePrivileges:
		return decodeBody[RevokePrivileges](b, closing)
	case TypeGrantRoles:
		return decodeBody[GrantRoles](b, closing)
	case TypeRevokeRoles:
		return decodeBody[RevokeRoles](b, closing)
	case TypeCreateTag:
		return decodeBody[CreateTag](b, closing)
	case TypeAlterTag:
		return decodeBody[AlterTag](b, closing)
	case TypeDropTag:
		return decodeBody[DropTag](b, closing)
	case TypeAssociateTagsV1:
		return decodeBody[AssociateTagsV1](b, closing)
	case TypeAssociateTagsV2:
		return decodeBody[AssociateTagsV2](b, closing)
	case TypeCreatePolicy:
		return decodeBody[CreatePolicy](b, closing)
	case TypeAlterPolicy:
		return decodeBody[AlterPolicy](b, closing)
	case TypeEnablePolicy:
		return decodeBody[EnablePolicy](b, closing)
	case TypeDisablePolicy:
		return decodeBody[DisablePolicy](b, closing)
	case TypeDropPolicy:
		return decodeBody[DropPolicy](b, closing)
	case TypeAttachPolicy:
		return decodeBody[AttachPolicy](b, closing)
	case TypeDetachPolicy:
		return decodeBody[DetachPolicy](b, closing)
	case TypeCommitTableVersion:
		return decodeBody[CommitTableVersion](b, closing)
	case TypeAlterObject:
		return decodeBody[AlterObject](b, closing)
	case TypeCreateDomain:
		return decodeBody[CreateDomain](b, closing)
	case TypeAlterDomain:
		return decodeBody[AlterDomain](b, closing)
	case TypeSetDomainStatus:
		return decodeBody[SetDomainStatus](b, closing)
	case TypeSetDomainParent:
		return decodeBody[SetDomainParent](b, closing)
	case TypeDetachDomain:
		return decodeBody[DetachDomain](b, closing)
	case TypeSetDomainBackingTag:
		return decodeBody[SetDomainBackingTag](b, closing)
	case TypeDropDomain:
		return decodeBody[DropDomain](b, closing)
	case TypeSetRules:
		return decodeBody[SetRules](b, closing)
	case TypeCommitAccessLog:
		return decodeBody[CommitAccessLog](b, closing)
	case TypeSyncIdentityUser:
		return decodeBody[SyncIdentityUser](b, closing)
	}
	return nil, errUnknownType
}

func decodeBody[T Command](b []byte, closing bool) (Command, error) {
	var c T
	var err error
	if closing {
		err = strictClosed(b, &c)
	} else {
		err = strict(b, &c)
	}
	if err != nil {
		return nil, errf(ErrInvalidCommand, c.Op()+": "+err.Error())
	}
	return c, nil
}

// strictClosed decodes one JSON value from the start of b into v, rejecting
// unknown fields, and then requires the rest of b to be a closing brace with
// optional JSON whitespace around it.
func strictClosed(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	rest := skipSpace(b[d.InputOffset():])
	if len(rest) == 0 || rest[0] != '}' || len(skipSpace(rest[1:])) != 0 {
		return errors.New("trailing data")
	}
	return nil
}

// skipSpace drops leading JSON whitespace.
func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// strict decodes exactly one JSON value into v, rejecting unknown fields and
// trailing data.
func strict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data")
	}
	return nil
}
