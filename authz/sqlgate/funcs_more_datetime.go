package sqlgate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// The rewrites of MySQL's date and time functions of the function table
// (funcs.go): string literals are read as MySQL reads them. The same rule
// holds: only a DuckDB form that gives MySQL's answer, a refusal otherwise.
// The engine runs in UTC and so does every session.

const (
	nowStamp = "CAST(date_trunc('second', current_timestamp) AS TIMESTAMP)"
	nowTime  = "CAST(CAST(date_trunc('second', current_timestamp) AS TIMESTAMP) AS TIME)"
)

// tKind is what a string literal holds when read as a temporal value.
type tKind uint8

const (
	litNone     tKind = iota // not a form the gate reads: refused
	litNull                  // a form MySQL reads as an invalid value: NULL
	litDate                  // YYYY-MM-DD
	litDatetime              // YYYY-MM-DD HH:MM[:SS[.ffffff]]
	litTime                  // [-]H:MM[:SS[.ffffff]], hours up to 838
)

// tValue is a temporal literal read by readTemporal.
type tValue struct {
	kind               tKind
	neg                bool
	y, mo, d, h, mi, s int
	us                 int    // microseconds
	frac               string // fraction digits as written
}

var (
	dateRe     = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})$`)
	datetimeRe = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?$`)
	timeRe     = regexp.MustCompile(`^(-)?(\d{1,3}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?$`)
)

func atoi(s string) int {
	n, _ := strconv.Atoi(s) // the regexps admit digits only
	return n
}

func micros(frac string) int {
	if frac == "" {
		return 0
	}
	return atoi((frac + "000000")[:6])
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// readTemporal reads a string literal as MySQL reads a temporal argument, in
// the strict forms only: a date part with a zero month or day (which MySQL
// reads as a "fuzzy" date) or a year before 1000 is refused, a month, day or
// time part out of range is MySQL's NULL.
func readTemporal(s string) tValue {
	s = strings.TrimSpace(s)
	if m := dateRe.FindStringSubmatch(s); m != nil {
		v := tValue{kind: litDate, y: atoi(m[1]), mo: atoi(m[2]), d: atoi(m[3])}
		return v.checkDate()
	}
	if m := datetimeRe.FindStringSubmatch(s); m != nil {
		v := tValue{kind: litDatetime, y: atoi(m[1]), mo: atoi(m[2]), d: atoi(m[3]), h: atoi(m[4]), mi: atoi(m[5]), s: atoi(m[6]), frac: m[7], us: micros(m[7])}
		v = v.checkDate()
		if v.kind == litDatetime && (v.h > 23 || v.mi > 59 || v.s > 59) {
			return tValue{kind: litNull}
		}
		return v
	}
	if m := timeRe.FindStringSubmatch(s); m != nil {
		v := tValue{kind: litTime, neg: m[1] != "", h: atoi(m[2]), mi: atoi(m[3]), s: atoi(m[4]), frac: m[5], us: micros(m[5])}
		switch {
		case v.mi > 59 || v.s > 59:
			return tValue{kind: litNull}
		case v.h > 838:
			return tValue{} // MySQL clips to 838:59:59 with a warning
		}
		return v
	}
	return tValue{}
}

func (v tValue) checkDate() tValue {
	switch {
	case v.y < 1000 || v.mo == 0 || v.d == 0:
		return tValue{}
	case v.mo > 12 || v.d > daysIn(v.y, v.mo):
		return tValue{kind: litNull}
	}
	return v
}

// text is the canonical literal DuckDB casts.
func (v tValue) text() string {
	switch v.kind {
	case litDate:
		return fmt.Sprintf("%04d-%02d-%02d", v.y, v.mo, v.d)
	case litDatetime:
		out := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", v.y, v.mo, v.d, v.h, v.mi, v.s)
		if v.us != 0 {
			out += fmt.Sprintf(".%06d", v.us)
		}
		return out
	}
	out := fmt.Sprintf("%02d:%02d:%02d", v.h, v.mi, v.s)
	if v.us != 0 {
		out += fmt.Sprintf(".%06d", v.us)
	}
	return out
}

// timeMicros is the value of a TIME (or the time part of a DATETIME) in
// microseconds.
func (v tValue) timeMicros() int64 {
	t := ((int64(v.h)*60+int64(v.mi))*60+int64(v.s))*1e6 + int64(v.us)
	if v.neg {
		return -t
	}
	return t
}

func (v tValue) goTime() time.Time {
	return time.Date(v.y, time.Month(v.mo), v.d, v.h, v.mi, v.s, v.us*1000, time.UTC)
}

func textNode(s string) ast.ExprNode { return &litExpr{text: s, isText: true} }

func intNode(n int64) ast.ExprNode { return &litExpr{text: strconv.FormatInt(n, 10)} }

func typedNull(typ string) ast.ExprNode { return tx("CAST(NULL AS " + typ + ")") }

// numberDate reads an integer literal as MySQL reads a number given for a
// date: YYYYMMDD, or YYMMDD with 70-99 the 1900s and 00-69 the 2000s.
func numberDate(e ast.ExprNode) (tValue, bool) {
	n, ok := intLit(e)
	if !ok || n <= 0 {
		return tValue{}, false
	}
	s := strconv.FormatInt(n, 10)
	switch len(s) {
	case 6:
		y := atoi(s[:2])
		if y < 70 {
			y += 2000
		} else {
			y += 1900
		}
		return tValue{kind: litDate, y: y, mo: atoi(s[2:4]), d: atoi(s[4:])}.checkDate(), true
	case 8:
		return tValue{kind: litDate, y: atoi(s[:4]), mo: atoi(s[4:6]), d: atoi(s[6:])}.checkDate(), true
	}
	return tValue{}, true
}

// dateArg makes a literal argument of a function reading a date or a
// DATETIME a typed DuckDB value: a string as DATE or TIMESTAMP, an integer
// as YYYYMMDD; NULL where MySQL reads an invalid date. Anything else is
// passed as is (a DATE or TIMESTAMP column; DuckDB refuses other types).
func dateArg(name string, e ast.ExprNode) (ast.ExprNode, error) {
	var v tValue
	if isNullLit(e) {
		return typedNull("DATE"), nil
	}
	if s, ok := textLit(e); ok {
		v = readTemporal(s)
	} else if nv, ok := numberDate(e); ok {
		v = nv
	} else {
		if _, isInt := intLit(e); isInt {
			return nil, unsupported("%s of this number is not supported; give a date", strings.ToUpper(name))
		}
		if l, ok := e.(*litExpr); ok && l.isFloat {
			return nil, unsupported("%s of this number is not supported; give a date", strings.ToUpper(name))
		}
		return e, nil
	}
	switch v.kind {
	case litDate:
		return &castExpr{v: textNode(v.text()), typ: "DATE"}, nil
	case litDatetime:
		return &castExpr{v: textNode(v.text()), typ: "TIMESTAMP"}, nil
	case litNull:
		return typedNull("DATE"), nil
	}
	return nil, unsupported("%s of this string is not supported; give a date as 'YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss'", strings.ToUpper(name))
}

// rwDatePart: a DuckDB function of the same meaning, of a date argument.
func rwDatePart(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := dateArg(name, args[0])
	if err != nil {
		return nil, err
	}
	return &callExpr{name: name, args: []ast.ExprNode{d}}, nil
}

func rwDateTmpl(fn, pre, post string) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
		d, err := dateArg(fn, args[0])
		if err != nil {
			return nil, err
		}
		return tx(pre, d, post), nil
	}
}

// rwTimePart: HOUR, MINUTE, SECOND, MICROSECOND and TIME_TO_SEC. MySQL reads
// a string as a TIME (hours beyond 23 and negative times included), so of a
// literal the answer is computed here.
func rwTimePart(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	if s, ok := textLit(args[0]); ok {
		v := readTemporal(s)
		switch v.kind {
		case litTime, litDatetime:
		case litNull:
			return typedNull("BIGINT"), nil
		default:
			return nil, unsupported("%s of this string is not supported; give a time as 'hh:mm:ss'", strings.ToUpper(name))
		}
		switch name {
		case "hour":
			return intNode(int64(v.h)), nil
		case "minute":
			return intNode(int64(v.mi)), nil
		case "second":
			return intNode(int64(v.s)), nil
		case "microsecond":
			return intNode(int64(v.us)), nil
		}
		return intNode(v.timeMicros() / 1e6), nil
	}
	if isNullLit(args[0]) {
		return typedNull("BIGINT"), nil
	}
	switch name {
	case "microsecond":
		return tx("(microsecond(", args[0], ") % 1000000)"), nil
	case "time_to_sec":
		return letx(args, func(r []ast.ExprNode) *tmplExpr {
			return tx("(((hour(", r[0], ") * 3600) + (minute(", r[0], ") * 60)) + second(", r[0], "))")
		}), nil
	}
	return &callExpr{name: name, args: args}, nil
}

// weekMode is MySQL's week_mode(): bit 0 Monday first, bit 1 weeks 1-53
// (a week may belong to the previous or next year), bit 2 week 1 is the
// first week with the first day (else the first with four days).
func weekMode(args []ast.ExprNode) (int64, error) {
	if len(args) < 2 {
		return 0 ^ 4, nil // default_week_format 0
	}
	m, ok := intLit(args[1])
	if !ok || m < 0 {
		return 0, unsupported("WEEK and YEARWEEK take a non-negative integer literal mode")
	}
	m &= 7
	if m&1 == 0 {
		m ^= 4
	}
	return m, nil
}

// weekStart is the first day of week 1 of year y (DuckDB text of a DATE).
func weekStart(y string, mode int64) string {
	j := "make_date(" + y + ", 1, 1)"
	wd := "dayofweek(" + j + ")" // Sunday 0
	if mode&1 != 0 {
		wd = "(isodow(" + j + ") - 1)" // Monday 0
	}
	short := "(" + wd + " >= 4)"
	if mode&4 != 0 {
		short = "(" + wd + " <> 0)"
	}
	return "(" + j + " + CAST(((CASE WHEN " + short + " THEN 7 ELSE 0 END) - " + wd + ") AS INTEGER))"
}

// calcWeek is MySQL's calc_week of a DATE d: the week number, and when year
// is set the year it belongs to, as year * 100 + week (YEARWEEK).
func calcWeek(d ast.ExprNode, mode int64, year, yearOnly bool) *tmplExpr {
	return letx([]ast.ExprNode{&castExpr{v: d, typ: "DATE"}}, func(r []ast.ExprNode) *tmplExpr {
		cur, prev, next := weekStart("year(__lg_v['f0'])", mode), weekStart("(year(__lg_v['f0']) - 1)", mode), weekStart("(year(__lg_v['f0']) + 1)", mode)
		wk := func(start string) string { return "(((__lg_v['f0'] - " + start + ") // 7) + 1)" }
		switch {
		case yearOnly:
			return tx("CASE WHEN (__lg_v['f0'] < " + cur + ") THEN (year(__lg_v['f0']) - 1) WHEN (__lg_v['f0'] >= " + next + ") THEN (year(__lg_v['f0']) + 1) ELSE year(__lg_v['f0']) END")
		case year:
			return tx("CASE WHEN (__lg_v['f0'] < " + cur + ") THEN (((year(__lg_v['f0']) - 1) * 100) + " + wk(prev) + ") WHEN (__lg_v['f0'] >= " + next +
				") THEN (((year(__lg_v['f0']) + 1) * 100) + 1) ELSE ((year(__lg_v['f0']) * 100) + " + wk(cur) + ") END")
		case mode&2 != 0:
			return tx("CASE WHEN (__lg_v['f0'] < " + cur + ") THEN " + wk(prev) + " WHEN (__lg_v['f0'] >= " + next + ") THEN 1 ELSE " + wk(cur) + " END")
		}
		return tx("CASE WHEN (__lg_v['f0'] < " + cur + ") THEN 0 ELSE " + wk(cur) + " END")
	})
}

func rwWeek(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := dateArg("WEEK", args[0])
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		// mode 0 is C's %U
		return tx("CAST(strftime(", d, ", '%U') AS INTEGER)"), nil
	}
	m, err := weekMode(args)
	if err != nil {
		return nil, err
	}
	return calcWeek(d, m, false, false), nil
}

func rwWeekOfYear(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := dateArg("WEEKOFYEAR", args[0])
	if err != nil {
		return nil, err
	}
	return calcWeek(d, 3, false, false), nil
}

func rwYearWeek(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := dateArg("YEARWEEK", args[0])
	if err != nil {
		return nil, err
	}
	m, err := weekMode(args)
	if err != nil {
		return nil, err
	}
	return calcWeek(d, m|2, true, false), nil
}

// toDaysExpr is MySQL's day number (TO_DAYS) of a DATE or DATETIME; before
// year 1 MySQL's calendar (a year 0) and DuckDB's differ: refused.
func toDaysExpr(d ast.ExprNode) *tmplExpr {
	return letx([]ast.ExprNode{&castExpr{v: d, typ: "DATE"}}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " < DATE '0001-01-01') THEN error('TO_DAYS before year 1 is not supported') ELSE (date_diff('day', DATE '0001-01-01', ", r[0], ") + 366) END")
	})
}

func rwToDays(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := dateArg("TO_DAYS", args[0])
	if err != nil {
		return nil, err
	}
	return toDaysExpr(d), nil
}

// rwToSeconds: TO_SECONDS counts whole seconds from MySQL's day 0.
func rwToSeconds(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := dateArg("TO_SECONDS", args[0])
	if err != nil {
		return nil, err
	}
	return letx([]ast.ExprNode{&castExpr{v: d, typ: "TIMESTAMP"}}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " < TIMESTAMP '0001-01-01 00:00:00') THEN error('TO_SECONDS before year 1 is not supported') ELSE (date_diff('second', TIMESTAMP '0001-01-01 00:00:00', ", r[0], ") + 31622400) END")
	}), nil
}

// rwFromDays: MySQL answers the zero date below day 366 and beyond
// 9999-12-31: refused at run time.
func rwFromDays(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{&castExpr{v: args[0], typ: "BIGINT"}}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN ((", r[0], " < 366) OR (", r[0], " > 3652424)) THEN error('FROM_DAYS outside 366 to 3652424 is not supported') ELSE (DATE '0001-01-01' + CAST((", r[0], " - 366) AS INTEGER)) END")
	}), nil
}

// rwMakeDate: MAKEDATE(year, dayofyear); NULL for a day below 1 or a year
// beyond 9999; a two-digit year is 1970-2069.
func rwMakeDate(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{&castExpr{v: args[0], typ: "BIGINT"}, &castExpr{v: args[1], typ: "BIGINT"}}, func(r []ast.ExprNode) *tmplExpr {
		y := tx("CASE WHEN (", r[0], " < 70) THEN (", r[0], " + 2000) WHEN (", r[0], " < 100) THEN (", r[0], " + 1900) ELSE ", r[0], " END")
		return tx("CASE WHEN ((", r[0], " < 0) OR (", r[0], " > 9999) OR (", r[1], " < 1)) THEN CAST(NULL AS DATE) WHEN (year((make_date(", y, ", 1, 1) + CAST((", r[1], " - 1) AS INTEGER))) > 9999) THEN CAST(NULL AS DATE) ELSE (make_date(", y, ", 1, 1) + CAST((", r[1], " - 1) AS INTEGER)) END")
	}), nil
}

// timeOfDay guards a DuckDB TIME computed from a count of microseconds.
func timeOfDay(us ast.ExprNode, what string) *tmplExpr {
	return letx([]ast.ExprNode{us}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN CAST(NULL AS TIME) WHEN ((", r[0], " < 0) OR (", r[0], " >= 86400000000)) THEN error('"+what+
			" outside 00:00:00 to 23:59:59 is not supported') ELSE (TIME '00:00:00' + to_microseconds(CAST(", r[0], " AS BIGINT))) END")
	})
}

// timeConst is a TIME literal, refused outside one day.
func timeConst(us int64, what string) (ast.ExprNode, error) {
	if us < 0 || us >= 86400e6 {
		return nil, unsupported("%s outside 00:00:00 to 23:59:59 is not supported", what)
	}
	v := tValue{kind: litTime, h: int(us / 3600e6), mi: int(us / 60e6 % 60), s: int(us / 1e6 % 60), us: int(us % 1e6)}
	return &castExpr{v: textNode(v.text()), typ: "TIME"}, nil
}

func rwSecToTime(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if n, ok := intLit(args[0]); ok {
		return timeConst(n*1e6, "SEC_TO_TIME")
	}
	if l, ok := args[0].(*litExpr); ok && l.isFloat {
		return nil, unsupported("SEC_TO_TIME of a DOUBLE is not supported")
	}
	return timeOfDay(tx("round((", args[0], " * 1000000))"), "SEC_TO_TIME"), nil
}

// rwMakeTime: NULL for minutes or seconds outside 0 to 59.
func rwMakeTime(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN ((", r[1], " < 0) OR (", r[1], " > 59) OR (", r[2], " < 0) OR (", r[2], " >= 60)) THEN CAST(NULL AS TIME) ELSE ",
			timeOfDay(tx("((((CAST(", r[0], " AS BIGINT) * 3600) + (CAST(", r[1], " AS BIGINT) * 60)) * 1000000) + round((", r[2], " * 1000000)))"), "MAKETIME"), " END")
	}), nil
}

// rwTime: the time part of a DATETIME; of a string, its time.
func rwTime(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if s, ok := textLit(args[0]); ok {
		v := readTemporal(s)
		switch v.kind {
		case litTime, litDatetime:
			return timeConst(v.timeMicros(), "TIME")
		case litNull:
			return typedNull("TIME"), nil
		}
		return nil, unsupported("TIME of this string is not supported; give 'hh:mm:ss' or 'YYYY-MM-DD hh:mm:ss'")
	}
	return &castExpr{v: args[0], typ: "TIME"}, nil
}

func rwTimeLiteral(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	s, ok := textLit(args[0])
	if !ok {
		return nil, unsupported("TIME literal is not supported")
	}
	v := readTemporal(s)
	if v.kind != litTime {
		return nil, unsupported("this TIME literal is not supported")
	}
	return timeConst(v.timeMicros(), "TIME")
}

// timeArg reads a literal time interval ('hh:mm:ss' or 'D hh:mm:ss') in
// microseconds.
func timeArg(name string, e ast.ExprNode) (int64, error) {
	s, ok := textLit(e)
	if !ok {
		return 0, unsupported("%s takes a string literal time as its second argument", name)
	}
	s = strings.TrimSpace(s)
	var days int64
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	if i := strings.IndexByte(s, ' '); i > 0 {
		d, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || d > 34 {
			return 0, unsupported("%s of this time is not supported", name)
		}
		days, s = d, strings.TrimSpace(s[i+1:])
	}
	v := readTemporal(s)
	if v.kind != litTime || v.neg {
		return 0, unsupported("%s of this time is not supported; give 'hh:mm:ss'", name)
	}
	us := days*86400e6 + v.timeMicros()
	if us > 838*3600e6+59*60e6+59e6 {
		return 0, unsupported("%s of this time is not supported", name)
	}
	if neg {
		us = -us
	}
	return us, nil
}

// rwAddTime: ADDTIME/SUBTIME of a DATETIME and a literal time. Of a string
// MySQL answers a string, computed here.
func rwAddTime(sub bool) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(name string, args []ast.ExprNode) (ast.ExprNode, error) {
		fn := "ADDTIME"
		if sub {
			fn = "SUBTIME"
		}
		us, err := timeArg(fn, args[1])
		if err != nil {
			return nil, err
		}
		if sub {
			us = -us
		}
		if s, ok := textLit(args[0]); ok {
			v := readTemporal(s)
			switch v.kind {
			case litNull:
				return typedNull("VARCHAR"), nil
			case litDatetime:
				if v.frac != "" || us%1e6 != 0 {
					return nil, unsupported("%s with fractional seconds is not supported", fn)
				}
				t := v.goTime().Add(time.Duration(us) * time.Microsecond)
				if t.Year() < 1000 || t.Year() > 9999 {
					return nil, unsupported("%s out of range is not supported", fn)
				}
				return textNode(t.Format("2006-01-02 15:04:05")), nil
			}
			return nil, unsupported("%s of this string is not supported; give 'YYYY-MM-DD hh:mm:ss'", fn)
		}
		// A DATETIME column; DuckDB's TIME + INTERVAL wraps around a day,
		// so anything but a TIMESTAMP is refused.
		return letx(args[:1], func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN (typeof(", r[0], ") <> 'TIMESTAMP') THEN error('"+fn+" of anything but a DATETIME is not supported') ELSE (",
				r[0], " + to_microseconds(CAST("+strconv.FormatInt(us, 10)+" AS BIGINT))) END")
		}), nil
	}
}

// rwTimeDiff: TIMEDIFF of two DATETIMEs or two TIMEs, as a TIME within a
// day (refused outside it).
func rwTimeDiff(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	a, aok := textLit(args[0])
	b, bok := textLit(args[1])
	if aok && bok {
		va, vb := readTemporal(a), readTemporal(b)
		switch {
		case va.kind == litNull || vb.kind == litNull:
			return typedNull("TIME"), nil
		case va.kind == litTime && vb.kind == litTime:
			return timeConst(va.timeMicros()-vb.timeMicros(), "TIMEDIFF")
		case va.kind == litDatetime && vb.kind == litDatetime:
			return timeConst(va.goTime().Sub(vb.goTime()).Microseconds(), "TIMEDIFF")
		}
		return nil, unsupported("TIMEDIFF of these strings is not supported; give two times or two DATETIMEs")
	}
	if aok || bok {
		return nil, unsupported("TIMEDIFF of a string and a value is not supported; CAST the string")
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (typeof(", r[0], ") NOT IN ('TIMESTAMP', 'TIME')) OR (typeof(", r[0], ") <> typeof(", r[1], ")) THEN error('TIMEDIFF takes two DATETIMEs or two TIMEs') ELSE ",
			timeOfDay(tx("date_diff('microsecond', ", r[1], ", ", r[0], ")"), "TIMEDIFF"), " END")
	}), nil
}

// timeFormatCodes: the specifiers TIME_FORMAT accepts (the others are
// MySQL's NULL or 0: refused).
var timeFormatCodes = map[byte]bool{'H': true, 'k': true, 'h': true, 'I': true, 'l': true, 'i': true, 's': true, 'S': true, 'f': true, 'p': true, 'r': true, 'T': true, '%': true}

// rwTimeFormat: TIME_FORMAT(t, fmt). Of a literal time (hours beyond 23
// included) the answer is computed here; of a TIME or DATETIME column
// through strftime.
func rwTimeFormat(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	f, ok := textLit(args[1])
	if !ok {
		return nil, unsupported("TIME_FORMAT takes a string literal format")
	}
	if 6*len(f) > DefaultStringBytes {
		// A specifier prints up to 11 bytes for its 2 (%r), as DATE_FORMAT.
		return nil, limitErr("%s", stringLimitMsg(DefaultStringBytes, "TIME_FORMAT"))
	}
	for i := 0; i < len(f); i++ {
		if f[i] == '%' {
			if i+1 >= len(f) || !timeFormatCodes[f[i+1]] {
				return nil, unsupported("TIME_FORMAT specifiers other than hours, minutes, seconds and AM/PM are not supported")
			}
			i++
		}
	}
	if s, ok := textLit(args[0]); ok {
		v := readTemporal(s)
		switch v.kind {
		case litNull:
			return typedNull("VARCHAR"), nil
		case litTime, litDatetime:
			if v.neg {
				return nil, unsupported("TIME_FORMAT of a negative time is not supported")
			}
			return textNode(formatTime(v, f)), nil
		}
		return nil, unsupported("TIME_FORMAT of this string is not supported; give 'hh:mm:ss'")
	}
	out, _, _, err := translateFormat(f, false)
	if err != nil {
		return nil, err
	}
	return tx("strftime((DATE '2000-01-01' + CAST(", args[0], " AS TIME)), ", textNode(out), ")"), nil
}

// formatTime is MySQL's TIME_FORMAT of a time value.
func formatTime(v tValue, f string) string {
	h12 := v.h % 12
	if h12 == 0 {
		h12 = 12
	}
	ampm := "AM"
	if v.h%24 >= 12 {
		ampm = "PM"
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'H':
			fmt.Fprintf(&b, "%02d", v.h)
		case 'k':
			fmt.Fprintf(&b, "%d", v.h)
		case 'h', 'I':
			fmt.Fprintf(&b, "%02d", h12)
		case 'l':
			fmt.Fprintf(&b, "%d", h12)
		case 'i':
			fmt.Fprintf(&b, "%02d", v.mi)
		case 's', 'S':
			fmt.Fprintf(&b, "%02d", v.s)
		case 'f':
			fmt.Fprintf(&b, "%06d", v.us)
		case 'p':
			b.WriteString(ampm)
		case 'r':
			fmt.Fprintf(&b, "%02d:%02d:%02d %s", h12, v.mi, v.s, ampm)
		case 'T':
			fmt.Fprintf(&b, "%02d:%02d:%02d", v.h, v.mi, v.s)
		case '%':
			b.WriteByte('%')
		}
	}
	return b.String()
}

// rwTimestamp: TIMESTAMP(d) as a DATETIME; TIMESTAMP(d, t) adds a literal
// time.
func rwTimestamp(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := dateArg("TIMESTAMP", args[0])
	if err != nil {
		return nil, err
	}
	ts := &castExpr{v: d, typ: "TIMESTAMP"}
	if len(args) == 1 {
		return ts, nil
	}
	us, err := timeArg("TIMESTAMP", args[1])
	if err != nil {
		return nil, err
	}
	return tx("(", ts, " + to_microseconds(CAST("+strconv.FormatInt(us, 10)+" AS BIGINT)))"), nil
}

// rwTimestampAdd: TIMESTAMPADD(unit, n, d) is DATE_ADD(d, INTERVAL n unit).
func rwTimestampAdd(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	return rwDateAddMore(false)(name, []ast.ExprNode{args[2], args[1], args[0]})
}

var tzOffsetRe = regexp.MustCompile(`^([+-])(\d{1,2}):(\d{2})$`)

// tzOffset reads a literal '+hh:mm' offset in minutes (MySQL's range
// -13:59 to +14:00); named zones need the server's time zone tables.
func tzOffset(e ast.ExprNode) (int64, error) {
	s, ok := textLit(e)
	if !ok {
		return 0, unsupported("CONVERT_TZ takes string literal offsets")
	}
	m := tzOffsetRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, unsupported("CONVERT_TZ takes offsets as '+hh:mm'; named time zones are not supported")
	}
	mins := int64(atoi(m[2])*60 + atoi(m[3]))
	if atoi(m[3]) > 59 {
		return 0, unsupported("CONVERT_TZ of this offset is not supported")
	}
	if m[1] == "-" {
		mins = -mins
	}
	if mins < -(13*60+59) || mins > 14*60 {
		return 0, unsupported("CONVERT_TZ of this offset is not supported")
	}
	return mins, nil
}

// rwConvertTZ: CONVERT_TZ(dt, from, to) with offsets. MySQL leaves a value
// whose UTC time is outside the TIMESTAMP range (1970-01-01 00:00:01 to
// 2038-01-19 03:14:07) unconverted.
func rwConvertTZ(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	from, err := tzOffset(args[1])
	if err != nil {
		return nil, err
	}
	to, err := tzOffset(args[2])
	if err != nil {
		return nil, err
	}
	d, err := dateArg("CONVERT_TZ", args[0])
	if err != nil {
		return nil, err
	}
	return letx([]ast.ExprNode{&castExpr{v: d, typ: "TIMESTAMP"}}, func(r []ast.ExprNode) *tmplExpr {
		utc := tx("(", r[0], " - to_minutes(CAST("+strconv.FormatInt(from, 10)+" AS BIGINT)))")
		return tx("CASE WHEN (", utc, " BETWEEN TIMESTAMP '1970-01-01 00:00:01' AND TIMESTAMP '2038-01-19 03:14:07.999999') THEN (", r[0],
			" + to_minutes(CAST("+strconv.FormatInt(to-from, 10)+" AS BIGINT))) ELSE ", r[0], " END")
	}), nil
}

// rwPeriod: PERIOD_ADD(p, n) and PERIOD_DIFF(p1, p2) of periods YYMM or
// YYYYMM (a two-digit year is 1970-2069). MySQL refuses a month outside 1 to
// 12; so does this, at run time.
func rwPeriod(add bool) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
		for _, a := range args {
			if l, ok := a.(*litExpr); ok && (l.isFloat || l.isText || strings.Contains(l.text, ".")) {
				return nil, unsupported("PERIOD_ADD and PERIOD_DIFF take integers")
			}
		}
		months := func(p ast.ExprNode) *tmplExpr {
			y := tx("(", p, " // 100)")
			return tx("(((CASE WHEN (", y, " < 70) THEN (", y, " + 2000) WHEN (", y, " < 100) THEN (", y, " + 1900) ELSE ", y, " END) * 12) + ((", p, " % 100) - 1))")
		}
		bad := func(p ast.ExprNode) *tmplExpr {
			return tx("(", p, " <= 0) OR ((", p, " % 100) NOT BETWEEN 1 AND 12)")
		}
		return letx([]ast.ExprNode{&castExpr{v: args[0], typ: "BIGINT"}, &castExpr{v: args[1], typ: "BIGINT"}}, func(r []ast.ExprNode) *tmplExpr {
			if add {
				m := func() *tmplExpr { return tx("(", months(r[0]), " + ", r[1], ")") }
				return tx("CASE WHEN (", r[0], " IS NULL) OR (", r[1], " IS NULL) THEN NULL WHEN ", bad(r[0]), " OR (", m(), " < 1200) OR (", m(),
					" > 119999) THEN error('PERIOD_ADD of this period is not supported') ELSE ((((", m(), " // 12) * 100) + (", m(), " % 12)) + 1) END")
			}
			return tx("CASE WHEN (", r[0], " IS NULL) OR (", r[1], " IS NULL) THEN NULL WHEN ", bad(r[0]), " OR ", bad(r[1]),
				" THEN error('PERIOD_DIFF of this period is not supported') ELSE (", months(r[0]), " - ", months(r[1]), ") END")
		}), nil
	}
}

// rwUnixTimestamp: of a literal the answer is computed here (an integer, or a
// DECIMAL with the literal's fraction digits, as MySQL's); MySQL answers 0
// outside its range, refused here.
func rwUnixTimestamp(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) == 0 {
		return tx("CAST(epoch(date_trunc('second', current_timestamp)) AS BIGINT)"), nil
	}
	if s, ok := textLit(args[0]); ok {
		v := readTemporal(s)
		switch v.kind {
		case litNull:
			return typedNull("BIGINT"), nil
		case litDate, litDatetime:
			t := v.goTime()
			if t.Unix() < 0 || t.Unix() > 1<<31-1 {
				return nil, unsupported("UNIX_TIMESTAMP outside 1970 to 2038 is not supported")
			}
			out := strconv.FormatInt(t.Unix(), 10)
			if v.frac != "" {
				out += "." + v.frac
			}
			return &litExpr{text: out}, nil
		}
		return nil, unsupported("UNIX_TIMESTAMP of this string is not supported; give 'YYYY-MM-DD hh:mm:ss'")
	}
	d, err := dateArg("UNIX_TIMESTAMP", args[0])
	if err != nil {
		return nil, err
	}
	// An integer for a DATE or DATETIME without fraction (typed.go).
	return &unixTimeExpr{v: d}, nil
}

func rwFromUnixtime(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	ts := tx("CAST(to_timestamp(", args[0], ") AS TIMESTAMP)")
	if len(args) == 1 {
		return ts, nil
	}
	return rwDateFormatMore(name, []ast.ExprNode{ts, args[1]})
}

var extractParts = map[ast.TimeUnitType][]string{
	ast.TimeUnitYearMonth:         {"year", "month"},
	ast.TimeUnitDayHour:           {"day", "hour"},
	ast.TimeUnitDayMinute:         {"day", "hour", "minute"},
	ast.TimeUnitDaySecond:         {"day", "hour", "minute", "second"},
	ast.TimeUnitHourMinute:        {"hour", "minute"},
	ast.TimeUnitHourSecond:        {"hour", "minute", "second"},
	ast.TimeUnitMinuteSecond:      {"minute", "second"},
	ast.TimeUnitDayMicrosecond:    {"day", "hour", "minute", "second", "us"},
	ast.TimeUnitHourMicrosecond:   {"hour", "minute", "second", "us"},
	ast.TimeUnitMinuteMicrosecond: {"minute", "second", "us"},
	ast.TimeUnitSecondMicrosecond: {"second", "us"},
}

// rwExtractMore: EXTRACT of a single unit, of MySQL's compound units
// (YEAR_MONTH is YYYYMM, DAY_SECOND DDhhmmss …), of MICROSECOND and of WEEK
// (WEEK(d, 0)).
func rwExtractMore(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	u, ok := args[0].(*ast.TimeUnitExpr)
	if !ok {
		return nil, unsupported("EXTRACT takes a unit")
	}
	d, err := dateArg("EXTRACT", args[1])
	if err != nil {
		return nil, err
	}
	switch u.Unit {
	case ast.TimeUnitWeek:
		return tx("CAST(strftime(", d, ", '%U') AS INTEGER)"), nil
	case ast.TimeUnitMicrosecond:
		return tx("(date_part('microseconds', ", d, ") % 1000000)"), nil
	}
	parts, ok := extractParts[u.Unit]
	if !ok {
		return rwExtract(name, []ast.ExprNode{args[0], d})
	}
	return letx([]ast.ExprNode{d}, func(r []ast.ExprNode) *tmplExpr {
		var acc *tmplExpr
		for _, p := range parts {
			width, part := "100", tx("date_part('"+p+"', ", r[0], ")")
			if p == "us" {
				width, part = "1000000", tx("(date_part('microseconds', ", r[0], ") % 1000000)")
			}
			if acc == nil {
				acc = part
			} else {
				acc = tx("((", acc, " * "+width+") + ", part, ")")
			}
		}
		return acc
	}), nil
}

// dateFormatWeeks are the DATE_FORMAT specifiers of MySQL's week modes
// (strftime has no equivalent): %u mode 1, %V mode 2, %v mode 3, and %X/%x
// the years of the weeks of %V/%v.
var dateFormatWeeks = map[byte]struct {
	mode     int64
	yearOnly bool
}{'u': {1, false}, 'V': {2 ^ 4, false}, 'v': {3, false}, 'X': {2 ^ 4, true}, 'x': {3, true}}

// rwDateFormatMore: DATE_FORMAT with the specifiers strftime has, plus %D
// (day with English suffix) and the week specifiers, of a date argument.
func rwDateFormatMore(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	f, ok := textLit(args[1])
	if !ok {
		return nil, unsupported("DATE_FORMAT takes a string literal format")
	}
	d, err := dateArg("DATE_FORMAT", args[0])
	if err != nil {
		return nil, err
	}
	// Split the format at the specifiers strftime lacks.
	var segs []string // strftime formats, and "%D", "%u" … for the others
	start := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			continue
		}
		c := f[i+1]
		if _, ok := dateFormatWeeks[c]; ok || c == 'D' {
			if i > start {
				segs = append(segs, f[start:i])
			}
			segs = append(segs, "\x00"+string(c))
			start = i + 2
		}
		i++
	}
	if start < len(f) {
		segs = append(segs, f[start:])
	}
	if len(segs) == 0 || len(segs) == 1 && segs[0][0] != 0 {
		return rwDateFormat(name, []ast.ExprNode{d, args[1]})
	}
	var bad error
	out := letx([]ast.ExprNode{d}, func(r []ast.ExprNode) *tmplExpr {
		parts := []any{"("}
		for i, s := range segs {
			if i > 0 {
				parts = append(parts, " || ")
			}
			switch {
			case s[0] != 0:
				t, _, _, err := translateFormat(s, false)
				if err != nil {
					bad = err
				}
				parts = append(parts, "strftime(", r[0], ", ", textNode(t), ")")
			case s[1] == 'D':
				parts = append(parts, "(CAST(day(", r[0], ") AS VARCHAR) || CASE WHEN (day(", r[0], ") IN (11, 12, 13)) THEN 'th' WHEN ((day(", r[0],
					") % 10) = 1) THEN 'st' WHEN ((day(", r[0], ") % 10) = 2) THEN 'nd' WHEN ((day(", r[0], ") % 10) = 3) THEN 'rd' ELSE 'th' END)")
			default:
				w := dateFormatWeeks[s[1]]
				width := "2"
				if w.yearOnly {
					width = "4"
				}
				parts = append(parts, "lpad(CAST(", calcWeek(r[0], w.mode, false, w.yearOnly), " AS VARCHAR), "+width+", '0')")
			}
		}
		return tx(append(parts, ")")...)
	})
	if bad != nil {
		return nil, bad
	}
	return out, nil
}

// compoundUnits are MySQL's compound INTERVAL units read from a string
// ('1:30' MINUTE_SECOND): the size of each part, in months for YEAR_MONTH
// and in microseconds otherwise. Units with a microsecond part are not
// read (MySQL scales their fraction).
var compoundUnits = map[ast.TimeUnitType][]int64{
	ast.TimeUnitYearMonth:    {12, 1},
	ast.TimeUnitDayHour:      {86400e6, 3600e6},
	ast.TimeUnitDayMinute:    {86400e6, 3600e6, 60e6},
	ast.TimeUnitDaySecond:    {86400e6, 3600e6, 60e6, 1e6},
	ast.TimeUnitHourMinute:   {3600e6, 60e6},
	ast.TimeUnitHourSecond:   {3600e6, 60e6, 1e6},
	ast.TimeUnitMinuteSecond: {60e6, 1e6},
}

var intervalTextRe = regexp.MustCompile(`^[0-9]+([ :.\-_/]+[0-9]+)*$`)
var digitsRe = regexp.MustCompile(`[0-9]+`)

// compoundInterval reads a string literal of a compound unit as MySQL
// does: parts separated by punctuation, missing leading parts zero, a
// leading - negating the whole.
func compoundInterval(s string, sizes []int64) (int64, error) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = strings.TrimSpace(s[1:])
	}
	if !intervalTextRe.MatchString(s) {
		return 0, unsupported("INTERVAL of this string is not supported")
	}
	parts := digitsRe.FindAllString(s, -1)
	if len(parts) > len(sizes) {
		return 0, unsupported("INTERVAL of this string is not supported")
	}
	var n int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v > 1e9 {
			return 0, unsupported("INTERVAL of this string is not supported")
		}
		n += v * sizes[len(sizes)-len(parts)+i]
	}
	if neg {
		n = -n
	}
	return n, nil
}

// rwDateAddMore: DATE_ADD/DATE_SUB/ADDDATE/SUBDATE(d, INTERVAL n unit), and
// TIMESTAMPADD, with MySQL's answers where the engine's differ: a compound
// unit from a string, a NULL date, NULL for a year beyond 9999, and of a
// string a string with six fraction digits when there is a fraction (DuckDB
// prints the fraction short). A DATE with a unit of a day or more stays a
// DATE; "d + 0" makes DuckDB refuse a DATETIME there (MySQL answers a
// DATETIME, which DuckDB's types cannot follow without the column type).
func rwDateAddMore(sub bool) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	op := " + "
	if sub {
		op = " - "
	}
	return func(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
		u, ok := args[2].(*ast.TimeUnitExpr)
		if !ok {
			return nil, unsupported("DATE_ADD/DATE_SUB take an INTERVAL")
		}
		var iv ast.ExprNode
		var dateUnit bool
		if sizes, ok := compoundUnits[u.Unit]; ok {
			s, ok := textLit(args[1])
			if !ok {
				return nil, unsupported("INTERVAL of unit %s takes a string literal", u.Unit.String())
			}
			n, err := compoundInterval(s, sizes)
			if err != nil {
				return nil, err
			}
			if u.Unit == ast.TimeUnitYearMonth {
				iv, dateUnit = tx("to_months(CAST("+strconv.FormatInt(n, 10)+" AS INTEGER))"), true
			} else {
				iv = tx("to_microseconds(CAST(" + strconv.FormatInt(n, 10) + " AS BIGINT))")
			}
		} else {
			var err error
			if iv, dateUnit, err = interval(args[1], u); err != nil {
				return nil, err
			}
		}
		if folded, ok := foldDateArith(args[0], args[1], u.Unit, sub); ok {
			return folded, nil
		}
		d := args[0]
		asText := false
		if isNullLit(d) {
			return typedNull("TIMESTAMP"), nil
		}
		if s, ok := textLit(d); ok {
			v := readTemporal(s)
			switch v.kind {
			case litDate:
				d = &castExpr{v: textNode(v.text()), typ: "DATE"}
			case litDatetime:
				d = &castExpr{v: textNode(v.text()), typ: "TIMESTAMP"}
				dateUnit = false
			case litNull:
				return typedNull("VARCHAR"), nil
			default:
				return nil, unsupported("DATE_ADD/DATE_SUB of this string is not supported; give 'YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss'")
			}
			asText = true
		}
		var res ast.ExprNode
		if dateUnit {
			res = tx("CAST(((", d, " + 0)"+op, iv, ") AS DATE)")
		} else {
			res = tx("(", d, op, iv, ")")
		}
		typed := letx([]ast.ExprNode{res}, func(r []ast.ExprNode) *tmplExpr {
			out := r[0]
			if asText {
				if dateUnit {
					out = tx("CAST(", r[0], " AS VARCHAR)")
				} else {
					out = tx("CASE WHEN ((microsecond(", r[0], ") % 1000000) <> 0) THEN strftime(", r[0], ", '%Y-%m-%d %H:%M:%S.%f') ELSE strftime(", r[0], ", '%Y-%m-%d %H:%M:%S') END")
				}
			}
			return tx("CASE WHEN (year(", r[0], ") > 9999) THEN NULL WHEN (year(", r[0], ") < 1) THEN error('DATE_ADD/DATE_SUB before year 1 is not supported') ELSE ", out, " END")
		})
		if asText {
			return &stringResult{v: typed}, nil
		}
		return typed, nil
	}
}

// foldDateArith computes DATE_ADD or DATE_SUB (sub) of a date or datetime
// string literal and an integer count of days, weeks, months, quarters or
// years, as MySQL does: the result is the string MySQL returns, a literal
// the engine compares with a DATE column as a date, and can prune files by
// (TPC-H's l_shipdate <= date_sub('1998-12-01', interval 108 day)). A month
// arithmetic that lands past the month's end takes its last day. ok is
// false for anything else, and for a result outside years 1000 to 9999,
// which the general form answers.
func foldDateArith(d, n ast.ExprNode, unit ast.TimeUnitType, sub bool) (ast.ExprNode, bool) {
	s, ok := textLit(d)
	if !ok {
		return nil, false
	}
	v := readTemporal(s)
	if v.kind != litDate && v.kind != litDatetime {
		return nil, false
	}
	count, ok := intLit(n)
	if t, isText := textLit(n); isText {
		// A quoted count ('3' MONTH) is the integer it spells (interval).
		c, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		count, ok = c, err == nil
	}
	if !ok || count > 1<<31 || count < -(1<<31) {
		return nil, false
	}
	if sub {
		count = -count
	}
	var months, days int64
	switch unit {
	case ast.TimeUnitDay:
		days = count
	case ast.TimeUnitWeek:
		days = 7 * count
	case ast.TimeUnitMonth:
		months = count
	case ast.TimeUnitQuarter:
		months = 3 * count
	case ast.TimeUnitYear:
		months = 12 * count
	default:
		return nil, false
	}
	y, mo, dd := int64(v.y), int64(v.mo), v.d
	if months != 0 {
		m := y*12 + mo - 1 + months
		y, mo = m/12, m%12+1
		if y < 1000 || y > 9999 {
			return nil, false
		}
		dd = min(dd, daysIn(int(y), int(mo)))
	}
	t := time.Date(int(y), time.Month(mo), dd, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days))
	if t.Year() < 1000 || t.Year() > 9999 {
		return nil, false
	}
	v.y, v.mo, v.d = t.Year(), int(t.Month()), t.Day()
	return textNode(v.text()), true
}
