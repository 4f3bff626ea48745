// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: an OpenTelemetry collector's answer to taprootd's
 * push (an ExportProfilesServiceResponse, outside data) through
 * taproot_otlp_read_response(). Seeds: tests/fuzz/corpus/otlp, answers
 * the real protoc encoded (none rejected; some, with a message).
 *
 * What a success promises is checked: the message within its buffer,
 * NUL-terminated, printable ASCII only, and "" in a buffer of one byte;
 * a refusal refused whatever the buffer. A breach aborts.
 */
#include <string.h>

#include "fuzz.h"
#include "profile/profile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[64], one[1];
	int64_t rejected;
	size_t n;

	if (taproot_otlp_read_response(data, size, &rejected, msg, sizeof(msg)) < 0) {
		check(taproot_otlp_read_response(data, size, &rejected, one, 1) < 0);
		return 0;
	}
	n = strnlen(msg, sizeof(msg));
	check(n < sizeof(msg));
	for (size_t i = 0; i < n; i++)
		check(msg[i] >= 0x20 && msg[i] < 0x7f);
	check(taproot_otlp_read_response(data, size, &rejected, one, 1) == 0 && !one[0]);
	return 0;
}
