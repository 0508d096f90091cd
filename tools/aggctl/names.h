/* SPDX-License-Identifier: GPL-2.0 */
/* Names of the API's enums and attributes, as aggctl prints and parses them. */
#ifndef _AGGCTL_NAMES_H
#define _AGGCTL_NAMES_H

const char *attr_name(unsigned int type);
const char *worker_attr_name(unsigned int type);
const char *policy_name(unsigned int policy);
int policy_parse(const char *s);		/* -1 if unknown */
const char *state_name(unsigned int state);
const char *counter_name(unsigned int c);

#endif
