package billing

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oracleVerdict states the classification of a money answer independently of
// classifyMoney's ordered rules, as two definitions:
//
//	accepted ⟺ 2xx ∧ data ∧ success≠false ∧ (code accepting ∨ (no code ∧ no code due ∧ success true))
//	refused  ⟺ (2xx ∨ 4xx) ∧ success≠true ∧ code ∉ {accepting, 0005} ∧ (4xx ∨ success false ∨ failure code)
//
// and unknown otherwise.
func oracleVerdict(a moneyAnswer) verdict {
	accepted := a.status == statusSuccess && a.data && a.success != successFalse &&
		(a.code == codeAccepting || (a.code == codeNone && !a.codeDue && a.success == successTrue))
	refused := (a.status == statusSuccess || a.status == statusClientError) && a.success != successTrue &&
		a.code != codeAccepting && a.code != codeConnectionError &&
		(a.status == statusClientError || a.success == successFalse || a.code == codeFailure)
	switch {
	case accepted && refused:
		panic(fmt.Sprintf("the oracle calls %+v both accepted and refused", a))
	case accepted:
		return verdictAccepted
	case refused:
		return verdictRefused
	}
	return verdictUnknown
}

// everyMoneyAnswer calls fn with every cell of the classification's inputs.
func everyMoneyAnswer(fn func(moneyAnswer)) {
	for status := range statusClassCount {
		for success := range successFlagCount {
			for code := range codeClassCount {
				for _, data := range []bool{false, true} {
					for _, codeDue := range []bool{false, true} {
						fn(moneyAnswer{status: status, success: success, code: code, data: data, codeDue: codeDue})
					}
				}
			}
		}
	}
}

// TestClassifyMoneyWholeTable checks every cell of the product of the inputs against
// the oracle, and that a contradiction is never definite.
func TestClassifyMoneyWholeTable(t *testing.T) {
	cells := 0
	counts := map[verdict]int{}
	everyMoneyAnswer(func(a moneyAnswer) {
		cells++
		got := classifyMoney(a)
		counts[got]++
		require.Equal(t, oracleVerdict(a), got, "%+v", a)
		yes := a.success == successTrue || a.code == codeAccepting
		no := a.success == successFalse || a.code == codeFailure || a.status == statusClientError
		if yes && no {
			require.Equal(t, verdictUnknown, got, "a contradiction is unknown: %+v", a)
		}
	})
	require.Equal(t, int(statusClassCount)*int(successFlagCount)*int(codeClassCount)*2*2, cells)
	t.Logf("%d cells: %d accepted, %d refused, %d unknown", cells, counts[verdictAccepted], counts[verdictRefused], counts[verdictUnknown])
}

// The tokens of the truth table in docs/money-safety.md.
var (
	docStatus  = map[string]statusClass{"1xx": statusInformational, "2xx": statusSuccess, "3xx": statusRedirect, "4xx": statusClientError, "408": statusRequestTimeout, "5xx": statusServerError, "other": statusUnclassified}
	docSuccess = map[string]successFlag{"absent": successAbsent, "true": successTrue, "false": successFalse}
	docCode    = map[string]codeClass{"none": codeNone, "accepting": codeAccepting, "failure": codeFailure, "0005": codeConnectionError, "unrecognised": codeUnrecognised}
	docYesNo   = map[string]bool{"yes": true, "no": false}
	docVerdict = map[string]verdict{"accepted": verdictAccepted, "refused": verdictRefused, "unknown": verdictUnknown}
)

// docRow is one row of the written truth table: a set of values per input.
type docRow struct {
	line                  string
	status                map[statusClass]bool
	success               map[successFlag]bool
	code                  map[codeClass]bool
	data, codeDue         map[bool]bool
	answer                verdict
	firstMatchOfSomeCells bool
}

func (r *docRow) matches(a moneyAnswer) bool {
	return r.status[a.status] && r.success[a.success] && r.code[a.code] && r.data[a.data] && r.codeDue[a.codeDue]
}

// parseDocSet reads a cell of the table: "any", or values joined by commas.
func parseDocSet[K comparable](t *testing.T, cell string, names map[string]K) map[K]bool {
	t.Helper()
	set := map[K]bool{}
	cell = strings.Trim(strings.TrimSpace(cell), "`")
	for _, name := range strings.Split(cell, ",") {
		name = strings.TrimSpace(name)
		if name == "any" {
			for _, v := range names {
				set[v] = true
			}
			continue
		}
		v, ok := names[name]
		require.True(t, ok, "unknown value %q in the truth table", name)
		set[v] = true
	}
	return set
}

// TestMoneySafetyDocTruthTable reads the truth table of docs/money-safety.md and checks
// that, read first row first, it says what classifyMoney says for every cell, and that
// every row decides some cell.
func TestMoneySafetyDocTruthTable(t *testing.T) {
	f, err := os.Open("docs/money-safety.md")
	require.NoError(t, err)
	defer f.Close()
	var rows []*docRow
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Every money answer, classified"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || strings.Contains(line, "HTTP status") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 7, "row %q", line)
		answer := strings.Trim(strings.TrimSpace(cells[6]), "*")
		rows = append(rows, &docRow{
			line:    line,
			status:  parseDocSet(t, cells[1], docStatus),
			success: parseDocSet(t, cells[2], docSuccess),
			code:    parseDocSet(t, cells[3], docCode),
			data:    parseDocSet(t, cells[4], docYesNo),
			codeDue: parseDocSet(t, cells[5], docYesNo),
			answer:  docVerdict[answer],
		})
		require.Contains(t, docVerdict, answer, "row %q", line)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows, "docs/money-safety.md has no truth table under its heading")
	cells := 0
	everyMoneyAnswer(func(a moneyAnswer) {
		cells++
		for _, r := range rows {
			if r.matches(a) {
				r.firstMatchOfSomeCells = true
				require.Equal(t, classifyMoney(a), r.answer, "row %q for %+v", r.line, a)
				return
			}
		}
		t.Fatalf("no row of the table covers %+v", a)
	})
	for _, r := range rows {
		assert.True(t, r.firstMatchOfSomeCells, "row %q decides nothing", r.line)
	}
	t.Logf("%d rows cover %d cells", len(rows), cells)
}

// moneyAnswerData is a data object every money movement's result reads something from.
// The spellings the acceptance reads as one field (id and TransactionId, reference and
// ClientReference) agree: disagreeing, they would be a contradiction.
const moneyAnswerData = `{"id":"pay_1","reference":"r1","status":"PENDING","TransactionId":"pay_1","ClientReference":"r1",` +
	`"servicePreApprovalId":"s1","clientReferenceId":"m1","preapprovalStatus":"PENDING"}`

// TestMoneyAnswersThroughThePipeline sends every money movement and answers it with
// every combination of concrete status, success flag, response code and data, and checks
// what the caller is told against the oracle: nil when accepted, a plain *APIError when
// refused, ErrOutcomeUnknown when unknown.
func TestMoneyAnswersThroughThePipeline(t *testing.T) {
	statuses := []int{101, 200, 201, 202, 302, 400, 403, 404, 408, 409, 429, 500, 501, 503, 600}
	codes := []ResponseCode{"", CodeSuccess, CodeAccepted, CodePreapprovalOK, CodeConnectionError, CodeFailed, CodeNotRegistered,
		CodeValidation, CodeDeclined, CodeInsufficientBalance, CodeKeysMismatch, CodeChannelNotAllowed, CodePreapprovalFailed,
		CodeCarrierError, "9999", "success"}
	successes := map[string]successFlag{"": successAbsent, `"success":true,`: successTrue, `"success":false,`: successFalse}
	datas := map[string]bool{"": false, `,"data":null`: false, `,"data":{}`: false, `,"data":` + moneyAnswerData: true}
	cells := 0
	for name, mc := range moneyCalls {
		before := cells
		c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
		var body string
		var status int
		mock.RegisterResponder(mc.method, mc.url, func(*http.Request) (*http.Response, error) {
			resp := httpmock.NewStringResponse(status, body)
			resp.Header.Set("Content-Type", "application/json")
			return resp, nil
		})
		for _, status = range statuses {
			for flagText, flag := range successes {
				for _, code := range codes {
					for dataText, data := range datas {
						codeText := ""
						if code != "" {
							codeText = `,"responseCode":"` + string(code) + `"`
						}
						body = `{` + flagText + `"message":"m"` + codeText + dataText + `}`
						a := moneyAnswer{status: statusClassOf(status), success: flag, code: code.class(),
							data: data && status >= 200 && status < 300, codeDue: name != "checkout"}
						want := oracleVerdict(a)
						err := mc.call(c)
						cells++
						desc := fmt.Sprintf("%s answered %d %s", name, status, body)
						switch want {
						case verdictAccepted:
							require.NoError(t, err, desc)
						case verdictRefused:
							var apiErr *APIError
							require.ErrorAs(t, err, &apiErr, desc)
							require.NotErrorIs(t, err, ErrOutcomeUnknown, desc)
							require.Equal(t, status, apiErr.StatusCode, desc)
						default:
							require.ErrorIs(t, err, ErrOutcomeUnknown, desc)
							var unknown *OutcomeUnknownError
							require.ErrorAs(t, err, &unknown, desc)
							require.Equal(t, mc.ref, unknown.ClientReference, desc)
						}
					}
				}
			}
		}
		require.Equal(t, cells-before, mock.GetTotalCallCount(), "each answer is one request")
	}
	t.Logf("%d answers to %d money calls checked", cells, len(moneyCalls))
}

// contradictoryAcceptances are the accepted answers of the six money calls, as the
// service writes them, to be turned into contradictions.
var contradictoryAcceptances = map[string]string{
	"checkout":     "payments/checkout_created.json",
	"receive":      "payments/receive_accepted.json",
	"send":         "payouts/send_accepted.json",
	"send to bank": "payouts/bank_accepted.json",
	"mandate":      "mandates/create_ussd.json",
	"direct debit": "mandates/charge_accepted.json",
}

// TestContradictoryAcceptanceIsOutcomeUnknown answers each money call with its own
// acceptance, data and accepting code included, under success false: the service says
// yes and no at once, so the money may have moved and the caller must not be told
// "nothing moved". Checkout's acceptance carries no code; it gets the provider's 0000.
// An acceptance under success true with a failure code is unknown as well.
func TestContradictoryAcceptanceIsOutcomeUnknown(t *testing.T) {
	require.Len(t, contradictoryAcceptances, len(moneyCalls))
	for name, mc := range moneyCalls {
		var accepted map[string]any
		require.NoError(t, json.Unmarshal(fixture(t, contradictoryAcceptances[name]), &accepted), name)
		for contradiction, edit := range map[string]func(m map[string]any){
			"success false with an accepting code": func(m map[string]any) {
				m["success"] = false
				if name == "checkout" {
					m["responseCode"] = string(CodeSuccess)
				}
			},
			"success true with a failure code": func(m map[string]any) {
				delete(m, "ResponseCode")
				m["success"], m["responseCode"] = true, string(CodeFailed)
			},
		} {
			t.Run(name+"/"+contradiction, func(t *testing.T) {
				answer := map[string]any{}
				for k, v := range accepted {
					answer[k] = v
				}
				edit(answer)
				body, err := json.Marshal(answer)
				require.NoError(t, err)
				c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
				mock.RegisterResponder(mc.method, mc.url, httpmock.NewBytesResponder(http.StatusOK, body))
				err = mc.call(c)
				require.ErrorIs(t, err, ErrOutcomeUnknown, "%s", body)
				var unknown *OutcomeUnknownError
				require.ErrorAs(t, err, &unknown)
				assert.Equal(t, mc.ref, unknown.ClientReference)
				var apiErr *APIError
				require.True(t, errors.As(err, &apiErr), "the answer is kept for the record")
				assert.Contains(t, apiErr.Message, "contradict")
				assert.Equal(t, 1, mock.GetTotalCallCount())
			})
		}
	}
}
