package sandbox

import (
	"strings"
	"time"
)

// smsMessage is a text the sandbox "sent" to a phone: the mandate OTPs.
type smsMessage struct {
	Message string    `json:"message"`
	SentAt  timestamp `json:"sentAt"`
}

// smsOutbox keeps every message by MSISDN, oldest first. Guarded by the
// Server's mu.
type smsOutbox map[string][]smsMessage

// send records message as sent to msisdn at now; s.mu must be held.
func (o *smsOutbox) send(msisdn, message string, now time.Time) {
	if *o == nil {
		*o = make(smsOutbox)
	}
	(*o)[msisdn] = append((*o)[msisdn], smsMessage{Message: message, SentAt: timestamp{now}})
}

// smsTo returns the messages sent to msisdn, newest first.
func (s *Server) smsTo(msisdn string) []smsMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	sent := s.sms[msisdn]
	newestFirst := make([]smsMessage, len(sent))
	for i, m := range sent {
		newestFirst[len(sent)-1-i] = m
	}
	return newestFirst
}

// SMS returns the text of the messages sent to msisdn (international, with
// or without +), newest first. A mandate OTP is sent as the code alone:
// ABCD-1234.
func (s *Server) SMS(msisdn string) []string {
	sent := s.smsTo(strings.TrimPrefix(msisdn, "+"))
	texts := make([]string, len(sent))
	for i, m := range sent {
		texts[i] = m.Message
	}
	return texts
}
