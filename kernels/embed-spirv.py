#!/usr/bin/env python3
"""Embeds SPIR-V modules in C: embed-spirv.py OUT.c OUT.h A.spv [B.spv ...].

Each FOO-BAR.spv becomes `const uint32_t spirv_foo_bar[]` and
`const size_t spirv_foo_bar_size` (bytes). Words keep SPIR-V's own
endianness check: the first word must be the magic number."""
import os
import struct
import sys

MAGIC = 0x07230203


def symbol(path):
    base = os.path.splitext(os.path.basename(path))[0]
    return "spirv_" + base.replace("-", "_").replace(".", "_")


def main(argv):
    out_c, out_h, inputs = argv[1], argv[2], argv[3:]
    header = ["/* Generated from glslc output by kernels/embed-spirv.py; do not edit. */",
              "#ifndef PERFD_KERNELS_SPIRV_H", "#define PERFD_KERNELS_SPIRV_H", "",
              "#include <stddef.h>", "#include <stdint.h>", ""]
    body = ["/* Generated from glslc output by kernels/embed-spirv.py; do not edit. */",
            '#include "%s"' % os.path.basename(out_h), ""]
    for path in inputs:
        with open(path, "rb") as f:
            data = f.read()
        if len(data) % 4 or len(data) < 20:
            sys.exit("%s: not a SPIR-V module (%d bytes)" % (path, len(data)))
        words = struct.unpack("<%dI" % (len(data) // 4), data)
        if words[0] != MAGIC:
            sys.exit("%s: bad SPIR-V magic 0x%08x" % (path, words[0]))
        name = symbol(path)
        header.append("extern const uint32_t %s[%d];" % (name, len(words)))
        header.append("extern const size_t %s_size;" % name)
        body.append("const uint32_t %s[%d] = {" % (name, len(words)))
        for i in range(0, len(words), 6):
            body.append("\t" + ", ".join("0x%08x" % w for w in words[i:i + 6]) + ",")
        body.append("};")
        body.append("const size_t %s_size = sizeof(%s);" % (name, name))
        body.append("")
    header += ["", "#endif", ""]
    with open(out_h, "w") as f:
        f.write("\n".join(header))
    with open(out_c, "w") as f:
        f.write("\n".join(body))


if __name__ == "__main__":
    main(sys.argv)
