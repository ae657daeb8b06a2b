#!/usr/bin/env python3
"""Writes usb-heavy.umockdev to stdout: a host with 150 CP2102N USB serial adapters behind 7-port hubs.

Deterministic, standard library only. Regenerate with:

    python3 test/machines/generate-usb-heavy.py > test/machines/usb-heavy.umockdev

The machine: an Intel PCH xHCI (0000:00:14.0, buses 1 and 2) and a Renesas uPD720201 xHCI card behind a root port
(0000:01:00.0, buses 3 and 4). Bus 1 carries 75 adapters on hubs of hubs (1-1.x, 1-2.x); bus 3 carries 75 on a
chain five hubs deep (3-1, 3-1.7, ... 3-1.7.7.7.7), a hub of hubs (3-2.x) and one adapter on a root port (3-3).
Every adapter has one interface bound to cp210x with a ttyUSBn node (188:n) and a unique serial number; device
numbers stay at or below 127 on every bus, as the USB address space requires.
"""
import sys

import hashlib

BUSES = {"pci", "usb", "hid", "i2c", "scsi", "usb-serial", "hdaudio", "platform", "serio", "acpi"}


def rel_link(linkdir, target):
    """Relative symlink text the kernel writes in `linkdir` for `target` (both sysfs paths from /sys)."""
    src = linkdir.strip("/").split("/")
    dst = target.strip("/").split("/")
    dparent = dst[:-1]
    k = len(src)
    ups = 0
    while dparent[:k] != src[:k]:
        k -= 1
        ups += 1
    return "../" * ups + "/".join(dst[k:])


def esc(v):
    return v.replace("\\", "\\\\").replace("\n", "\\n")


class Machine:
    def __init__(self):
        self.devs = {}

    def add(self, path, subsystem, env=None, attrs=None, links=None, hattrs=None, node=None, node_content=None,
            driver=None, devtype=None, devname=None, majmin=None, device_link=None):
        assert path.startswith("/devices/"), path
        assert path not in self.devs, path
        e = {"SUBSYSTEM": subsystem}
        a = {}
        lk = {}
        if driver:
            e["DRIVER"] = driver
            lk["driver"] = rel_link(path, "/bus/%s/drivers/%s" % (subsystem, driver))
        if devtype:
            e["DEVTYPE"] = devtype
        if devname:
            maj, mnr = majmin
            e["DEVNAME"] = "/dev/" + devname
            e["MAJOR"] = str(maj)
            e["MINOR"] = str(mnr)
            a["dev"] = "%d:%d\n" % (maj, mnr)
            node = devname
        for k, v in (env or {}).items():
            e[k] = v
        for k, v in (attrs or {}).items():
            a[k] = v if v.endswith("\n") else v + "\n"
        for k, v in (links or {}).items():
            lk[k] = rel_link(path, v) if v.startswith("/") else v
        if device_link is None:
            device_link = subsystem not in BUSES
        if device_link:
            parent = self.parent_of(path)
            if parent:
                lk["device"] = rel_link(path, parent)
        self.devs[path] = dict(node=node, node_content=node_content, env=e, attrs=a, links=lk,
                               hattrs=dict(hattrs or {}))
        return path

    def parent_of(self, path):
        p = path.rsplit("/", 1)[0]
        while p.count("/") > 1:
            if p in self.devs:
                return p
            p = p.rsplit("/", 1)[0]
        return None

    def render(self):
        out = []
        for path in sorted(self.devs):
            d = self.devs[path]
            lines = ["P: " + path]
            if d["node"]:
                lines.append("N: " + d["node"] + ("=" + d["node_content"] if d["node_content"] else ""))
            for k in sorted(d["env"]):
                lines.append("E: %s=%s" % (k, d["env"][k]))
            items = []
            for k, v in d["attrs"].items():
                items.append((k, "A: %s=%s" % (k, esc(v))))
            for k, v in d["links"].items():
                items.append((k, "L: %s=%s" % (k, v)))
            for k, v in d["hattrs"].items():
                items.append((k, "H: %s=%s" % (k, v)))
            for _, line in sorted(items):
                lines.append(line)
            out.append("\n".join(lines) + "\n")
        return "\n".join(out)


# ---- PCI ----

def pci_config(vendor, device, cls, rev, sv, sd, header=0, secondary=0, subordinate=0):
    b = bytearray(64)
    b[0:2] = vendor.to_bytes(2, "little")
    b[2:4] = device.to_bytes(2, "little")
    b[4:6] = (0x0407).to_bytes(2, "little")
    b[6:8] = (0x0010).to_bytes(2, "little")
    b[8] = rev
    b[9] = cls & 0xFF
    b[10] = (cls >> 8) & 0xFF
    b[11] = (cls >> 16) & 0xFF
    b[14] = header
    if header == 0:
        b[0x2C:0x2E] = sv.to_bytes(2, "little")
        b[0x2E:0x30] = sd.to_bytes(2, "little")
        b[0x34] = 0x40
    else:
        b[0x19] = secondary
        b[0x1A] = subordinate
        b[0x34] = 0x40
    return b.hex().upper()


def pci(m, path, vendor, device, cls, driver=None, sv=0, sd=0, rev=0, numa=-1, cpulist="0-7", irq=16,
        secondary=None, subordinate=None, extra_attrs=None):
    slot = path.rsplit("/", 1)[1]
    bridge = (cls >> 8) == 0x0604
    if bridge:
        sv, sd = 0, 0
    modalias = "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
        vendor, device, sv, sd, cls >> 16, (cls >> 8) & 0xFF, cls & 0xFF)
    env = {
        "MODALIAS": modalias,
        "PCI_CLASS": "%X" % cls,
        "PCI_ID": "%04X:%04X" % (vendor, device),
        "PCI_SLOT_NAME": slot,
        "PCI_SUBSYS_ID": "%04X:%04X" % (sv, sd),
    }
    attrs = {
        "ari_enabled": "0",
        "broken_parity_status": "0",
        "class": "0x%06x" % cls,
        "consistent_dma_mask_bits": "64" if not bridge else "32",
        "d3cold_allowed": "1",
        "device": "0x%04x" % device,
        "dma_mask_bits": "64" if not bridge else "32",
        "driver_override": "(null)",
        "enable": "1" if driver else "0",
        "irq": str(irq),
        "local_cpulist": cpulist,
        "modalias": modalias,
        "msi_bus": "1",
        "numa_node": str(numa),
        "revision": "0x%02x" % rev,
        "subsystem_device": "0x%04x" % sd,
        "subsystem_vendor": "0x%04x" % sv,
        "vendor": "0x%04x" % vendor,
    }
    if bridge:
        attrs["secondary_bus_number"] = str(secondary)
        attrs["subordinate_bus_number"] = str(subordinate)
    attrs.update(extra_attrs or {})
    h = {"config": pci_config(vendor, device, cls, rev, sv, sd, 1 if bridge else 0, secondary or 0,
                              subordinate or 0)}
    return m.add(path, "pci", env=env, attrs=attrs, hattrs=h, driver=driver)


# ---- USB ----

class UsbIf:
    def __init__(self, num, cls, sub, proto, driver=None, neps=1, name=None):
        self.num, self.cls, self.sub, self.proto = num, cls, sub, proto
        self.driver, self.neps, self.name = driver, neps, name


def usb_descriptors(vid, pid, bcd, dcls, dsub, dproto, mps0, usbver, ifaces, maxpower_ma, attrs=0xA0, nstr=(0, 0, 0)):
    dev = bytes([18, 1]) + usbver.to_bytes(2, "little") + bytes([dcls, dsub, dproto, mps0]) + \
        vid.to_bytes(2, "little") + pid.to_bytes(2, "little") + bcd.to_bytes(2, "little") + \
        bytes([nstr[0], nstr[1], nstr[2], 1])
    body = b""
    ep = 1
    for i in ifaces:
        body += bytes([9, 4, i.num, 0, i.neps, i.cls, i.sub, i.proto, 0])
        for k in range(i.neps):
            addr = (0x80 | ep) if k % 2 == 0 else ep
            body += bytes([7, 5, addr, 3 if i.cls == 9 else 2, 0x40, 0x00, 0x0C if i.cls == 9 else 0])
            if k % 2 == 1:
                ep += 1
        ep += 1
    total = 9 + len(body)
    cfg = bytes([9, 2]) + total.to_bytes(2, "little") + bytes([len(ifaces), 1, 0, attrs, maxpower_ma // (8 if usbver >= 0x300 else 2)])
    return (dev + cfg + body).hex().upper()


def usb_device(m, parent, name, busnum, devnum, vid, pid, bcd, dcls=0, dsub=0, dproto=0, speed="12",
               version=" 2.00", manufacturer=None, product=None, serial=None, maxchild=0, ifaces=(),
               maxpower="100mA", removable="removable", mps0=64, port_of=None, rootname=None):
    path = parent + "/" + name
    minor = (busnum - 1) * 128 + devnum - 1
    usbver = {" 1.10": 0x0110, " 2.00": 0x0200, " 2.10": 0x0210, " 3.00": 0x0300, " 3.10": 0x0310,
              " 3.20": 0x0320}[version]
    nstr = (1 if manufacturer else 0, 2 if product else 0, 3 if serial else 0)
    desc = usb_descriptors(vid, pid, bcd, dcls, dsub, dproto, mps0, usbver, ifaces, int(maxpower[:-2]), nstr=nstr)
    devname = "bus/usb/%03d/%03d" % (busnum, devnum)
    devpath = "0" if name.startswith("usb") else name.split("-", 1)[1]
    env = {
        "BUSNUM": "%03d" % busnum,
        "DEVNUM": "%03d" % devnum,
        "PRODUCT": "%x/%x/%x" % (vid, pid, bcd),
        "TYPE": "%d/%d/%d" % (dcls, dsub, dproto),
    }
    attrs = {
        "authorized": "1",
        "avoid_reset_quirk": "0",
        "bConfigurationValue": "1",
        "bDeviceClass": "%02x" % dcls,
        "bDeviceProtocol": "%02x" % dproto,
        "bDeviceSubClass": "%02x" % dsub,
        "bMaxPacketSize0": str(mps0),
        "bMaxPower": maxpower,
        "bNumConfigurations": "1",
        "bNumInterfaces": "%2d" % len(ifaces),
        "bcdDevice": "%04x" % bcd,
        "bmAttributes": "a0" if dcls != 9 else "e0",
        "busnum": str(busnum),
        "configuration": "",
        "devnum": str(devnum),
        "devpath": devpath,
        "idProduct": "%04x" % pid,
        "idVendor": "%04x" % vid,
        "ltm_capable": "no",
        "maxchild": str(maxchild),
        "quirks": "0x0",
        "removable": removable,
        "rx_lanes": "1",
        "speed": speed,
        "tx_lanes": "1",
        "urbnum": "%d" % (10 + devnum * 7),
        "version": version,
    }
    if name.startswith("usb"):
        attrs["authorized_default"] = "1"
        attrs["interface_authorized_default"] = "1"
    if manufacturer:
        attrs["manufacturer"] = manufacturer
    if product:
        attrs["product"] = product
    if serial:
        attrs["serial"] = serial
    links = {}
    if not name.startswith("usb"):
        # the port device of the parent hub (not recorded: it has no subsystem, umockdev needs one)
        hub = parent.rsplit("/", 1)[1]
        portnum = name.rsplit(".", 1)[1] if "." in name else name.split("-", 1)[1]
        hubif = "%d-0:1.0" % busnum if hub.startswith("usb") else hub + ":1.0"
        links["port"] = parent + "/%s/%s-port%s" % (hubif, hub, portnum)
    m.add(path, "usb", env=env, attrs=attrs, links=links, hattrs={"descriptors": desc}, driver="usb",
          devtype="usb_device", devname=devname, majmin=(189, minor))
    m.devs[path]["node_content"] = desc
    for i in ifaces:
        ifname = "%s:1.%d" % ("%d-0" % busnum if name.startswith("usb") else name, i.num)
        modalias = "usb:v%04Xp%04Xd%04Xdc%02Xdsc%02Xdp%02Xic%02Xisc%02Xip%02Xin%02X" % (
            vid, pid, bcd, dcls, dsub, dproto, i.cls, i.sub, i.proto, i.num)
        ienv = {
            "INTERFACE": "%d/%d/%d" % (i.cls, i.sub, i.proto),
            "MODALIAS": modalias,
            "PRODUCT": "%x/%x/%x" % (vid, pid, bcd),
            "TYPE": "%d/%d/%d" % (dcls, dsub, dproto),
        }
        iattrs = {
            "authorized": "1",
            "bAlternateSetting": " 0",
            "bInterfaceClass": "%02x" % i.cls,
            "bInterfaceNumber": "%02x" % i.num,
            "bInterfaceProtocol": "%02x" % i.proto,
            "bInterfaceSubClass": "%02x" % i.sub,
            "bNumEndpoints": "%02x" % i.neps,
            "modalias": modalias,
            "supports_autosuspend": "1",
        }
        if i.name:
            iattrs["interface"] = i.name
        m.add(path + "/" + ifname, "usb", env=ienv, attrs=iattrs, driver=i.driver, devtype="usb_interface")
    return path


def usb_root_hub(m, pcipath, busnum, usb3, nports, kernel="6.1.0-18-amd64", slot=None):
    slot = slot or pcipath.rsplit("/", 1)[1]
    return usb_device(m, pcipath, "usb%d" % busnum, busnum, 1, 0x1D6B, 3 if usb3 else 2, 0x0601, dcls=9, dsub=0,
                      dproto=3 if usb3 else 1, speed="5000" if usb3 else "480",
                      version=" 3.00" if usb3 else " 2.00",
                      manufacturer="Linux %s xhci-hcd" % kernel, product="xHCI Host Controller", serial=slot,
                      maxchild=nports, ifaces=[UsbIf(0, 9, 0, 0, "hub", 1)], maxpower="0mA", removable="unknown",
                      mps0=9 if usb3 else 64)


# ---- class devices ----

def input_dev(m, parent, glue, num, evnum, name, phys, bus_vendor_product, uniq="", ev="3", extra=None):
    ipath = parent + ("/input" if glue else "") + "/input%d" % num
    bus, ven, prod, ver = bus_vendor_product
    m.add(ipath, "input", env={
        "EV": ev, "NAME": '"%s"' % name, "PHYS": '"%s"' % phys, "PRODUCT": "%x/%x/%x/%x" % (bus, ven, prod, ver),
        "PROP": "0", "UNIQ": '"%s"' % uniq,
        "MODALIAS": "input:b%04Xv%04Xp%04Xe%04X-e0,1,k" % (bus, ven, prod, ver)},
        attrs={"name": name, "phys": phys, "uniq": uniq, "properties": "0",
               "modalias": "input:b%04Xv%04Xp%04Xe%04X-e0,1,k" % (bus, ven, prod, ver)})
    m.add(ipath + "/event%d" % evnum, "input", devname="input/event%d" % evnum, majmin=(13, 64 + evnum))
    return ipath


def hid_dev(m, parent, bus, vid, pid, seq, driver, name, phys, uniq="", hidraw=None, inputs=()):
    hname = "%04X:%04X:%04X.%04X" % (bus, vid, pid, seq)
    hpath = parent + "/" + hname
    modalias = "hid:b%04Xg%04Xv%08Xp%08X" % (bus, 0, vid, pid)
    m.add(hpath, "hid", driver=driver, env={
        "HID_ID": "%04X:%08X:%08X" % (bus, vid, pid), "HID_NAME": name, "HID_PHYS": phys, "HID_UNIQ": uniq,
        "MODALIAS": modalias}, attrs={"country": "00", "modalias": modalias})
    if hidraw is not None:
        m.add(hpath + "/hidraw/hidraw%d" % hidraw, "hidraw", devname="hidraw%d" % hidraw, majmin=(HIDRAW_MAJOR, hidraw))
    for (inum, evnum, iname, iphys) in inputs:
        input_dev(m, hpath, True, inum, evnum, iname, iphys, (bus, vid, pid, 0x111 if bus == 3 else 0x8100),
                  uniq=uniq, ev="12001f" if bus == 3 else "20000b")
    return hpath


HIDRAW_MAJOR = 241


def serial_hex(i, n=32, salt="cp2102"):
    return hashlib.sha1(("%s-%d" % (salt, i)).encode()).hexdigest()[:n]


# ---- the machine ----

CP2102 = dict(vid=0x10C4, pid=0xEA60, bcd=0x0100)


def main():
    m = Machine()
    R = "/devices/pci0000:00"
    pci(m, R + "/0000:00:00.0", 0x8086, 0x3E34, 0x060000, "skl_uncore", rev=0x0B, irq=0, sv=0x1028, sd=0x0869)
    x1 = pci(m, R + "/0000:00:14.0", 0x8086, 0xA36D, 0x0C0330, "xhci_hcd", rev=0x10, irq=125, sv=0x1028, sd=0x0869)
    rp = pci(m, R + "/0000:00:1c.0", 0x8086, 0xA338, 0x060400, "pcieport", rev=0xF0, irq=122, secondary=1,
             subordinate=1)
    x2 = pci(m, rp + "/0000:01:00.0", 0x1912, 0x0014, 0x0C0330, "xhci_hcd", rev=0x03, irq=126, sv=0x1912,
             sd=0x0014)

    state = {"tty": 0, "adapters": 0}
    devnums = {}

    def next_devnum(bus):
        devnums[bus] = devnums.get(bus, 1) + 1
        assert devnums[bus] <= 127, "devnum over 127 on bus %d" % bus
        return devnums[bus]

    def hub(parent, name, bus):
        return usb_device(m, parent, name, bus, next_devnum(bus), 0x1A40, 0x0201, 0x0100, dcls=9, dsub=0,
                          dproto=2, speed="480", product="USB 2.0 Hub [MTT]", maxchild=7, maxpower="100mA",
                          ifaces=[UsbIf(0, 9, 0, 0, "hub", 1)])

    def adapter(parent, name, bus):
        n = state["tty"]
        state["tty"] += 1
        state["adapters"] += 1
        d = usb_device(m, parent, name, bus, next_devnum(bus), CP2102["vid"], CP2102["pid"], CP2102["bcd"],
                       speed="12", version=" 1.10", manufacturer="Silicon Labs",
                       product="CP2102N USB to UART Bridge Controller", serial=serial_hex(n),
                       maxpower="100mA", ifaces=[UsbIf(0, 0xFF, 0, 0, "cp210x", 2,
                                                       name="CP2102N USB to UART Bridge Controller")])
        port = m.add(d + "/%s:1.0/ttyUSB%d" % (name, n), "usb-serial", driver="cp210x",
                     attrs={"port_number": "0"})
        # The links udev's serial rules make, as umockdev-record takes them from the udev database (DEVLINKS).
        slot = "0000:00:14.0" if bus in (1, 2) else "0000:01:00.0"
        links = ("/dev/serial/by-id/usb-Silicon_Labs_CP2102N_USB_to_UART_Bridge_Controller_%s-if00-port0 "
                 "/dev/serial/by-path/pci-%s-usb-0:%s:1.0-port0" % (serial_hex(n), slot, name.split("-", 1)[1]))
        m.add(port + "/tty/ttyUSB%d" % n, "tty", devname="ttyUSB%d" % n, majmin=(188, n), env={"DEVLINKS": links})

    def hub_of_adapters(parent, name, bus, count):
        h = hub(parent, name, bus)
        for p in range(1, count + 1):
            adapter(h, "%s.%d" % (name, p), bus)
        return h

    # controller 1 (bus 1 high/full speed, bus 2 SuperSpeed): 75 adapters on two 7-port hubs of 7-port hubs
    u1 = usb_root_hub(m, x1, 1, False, 14)
    usb_root_hub(m, x1, 2, True, 10)
    left = 75
    for rport, subhubs in ((1, 7), (2, 4)):
        h = hub(u1, "1-%d" % rport, 1)
        for p in range(1, subhubs + 1):
            n = min(7, left)
            hub_of_adapters(h, "1-%d.%d" % (rport, p), 1, n)
            left -= n
    assert left == 0

    # controller 2 (Renesas card; bus 3 high/full speed, bus 4 SuperSpeed): a chain five hubs deep, then a
    # hub of hubs, then one adapter straight on a root port
    u3 = usb_root_hub(m, x2, 3, False, 4, slot="0000:01:00.0")
    usb_root_hub(m, x2, 4, True, 4, slot="0000:01:00.0")
    parent, name = u3, "3-1"
    for depth in range(5):
        h = hub(parent, name, 3)
        for p in range(1, 7):
            adapter(h, "%s.%d" % (name, p), 3)
        parent, name = h, name + ".7"
    adapter(parent, name, 3)  # port 7 of the fifth hub
    h = hub(u3, "3-2", 3)
    for p in range(1, 7):
        hub_of_adapters(h, "3-2.%d" % p, 3, 7)
    adapter(h, "3-2.7", 3)
    adapter(u3, "3-3", 3)
    assert state["adapters"] == 150, state

    sys.stdout.write(m.render())


if __name__ == "__main__":
    main()
