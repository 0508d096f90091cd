/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ESA on a Tofino switch (TNA, Tofino 1): the wire protocol of
 * Documentation/wire-protocol.rst with the esa, atp and static policies,
 * configured by p4/tofino/esa-tofino from aggctl's job and switch
 * descriptions. Documentation/tofino.rst: design, resources, subset, how to
 * build and run. Not compiled here (no P4 compiler on this platform).
 */
#include <core.p4>
#include <tna.p4>

#include "esa_types.p4"
#include "esa_parser.p4"
#include "esa_values.p4"
#include "esa_owner.p4"
#include "esa_ingress.p4"
#include "esa_egress.p4"

Pipeline(EsaIngressParser(),
         EsaIngress(),
         EsaIngressDeparser(),
         EsaEgressParser(),
         EsaEgress(),
         EsaEgressDeparser()) pipe;

Switch(pipe) main;
