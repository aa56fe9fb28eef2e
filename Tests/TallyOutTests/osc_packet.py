#!/usr/bin/python3
"""OSC 1.0 packets for the tests, written from the specification's layout with struct, independently
of studio's encoder and decoder (Sources/TallyOut/OSCPacket.swift).

  osc_packet.py encode JSON   prints the packet as hex. JSON is a message, ["/address", ["s", "cam2"],
                              ["i", 3], ["f", -6.0], ["T"], ...], or a bundle, {"time": 1,
                              "elements": [...]} (elements nest).
  osc_packet.py decode HEX... prints each packet as that JSON (floats as numbers), a line each.
"""
import json
import struct
import sys


def padded(data):
    data += b"\0"
    return data + b"\0" * (-len(data) % 4)


def encode(spec):
    if isinstance(spec, dict):
        out = padded(b"#bundle") + struct.pack(">Q", spec.get("time", 1))
        for element in spec["elements"]:
            body = encode(element)
            out += struct.pack(">i", len(body)) + body
        return out
    address, arguments = spec[0], spec[1:]
    tags, data = ",", b""
    for argument in arguments:
        tag = argument[0]
        tags += tag
        if tag == "i":
            data += struct.pack(">i", argument[1])
        elif tag == "f":
            data += struct.pack(">f", argument[1])
        elif tag == "h":
            data += struct.pack(">q", argument[1])
        elif tag == "d":
            data += struct.pack(">d", argument[1])
        elif tag == "s":
            data += padded(argument[1].encode("utf-8"))
        elif tag not in "TFN":
            raise SystemExit("unknown tag " + tag)
    return padded(address.encode("utf-8")) + padded(tags.encode("ascii")) + data


def string(data, offset):
    end = data.index(b"\0", offset)
    return data[offset:end].decode("utf-8"), (end + 4) // 4 * 4


def decode(data):
    if data.startswith(b"#bundle\0"):
        (time,) = struct.unpack_from(">Q", data, 8)
        offset, elements = 16, []
        while offset < len(data):
            (size,) = struct.unpack_from(">i", data, offset)
            elements.append(decode(data[offset + 4:offset + 4 + size]))
            offset += 4 + size
        return {"time": time, "elements": elements}
    address, offset = string(data, 0)
    tags, offset = string(data, offset)
    message = [address]
    for tag in tags[1:]:
        if tag in "if":
            (value,) = struct.unpack_from(">" + tag, data, offset)
            offset += 4
            message.append([tag, value])
        elif tag in "hd":
            (value,) = struct.unpack_from(">" + ("q" if tag == "h" else "d"), data, offset)
            offset += 8
            message.append([tag, value])
        elif tag == "s":
            value, offset = string(data, offset)
            message.append([tag, value])
        else:
            message.append([tag])
    assert offset == len(data), "bytes left over"
    return message


if __name__ == "__main__":
    if sys.argv[1] == "encode":
        print(encode(json.loads(sys.argv[2])).hex())
    else:
        for packet in sys.argv[2:]:
            print(json.dumps(decode(bytes.fromhex(packet))))
