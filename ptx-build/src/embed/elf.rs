//! The bytes of an image object: a relocatable ELF64 file, little-endian, that defines one
//! read-only data symbol per image, each in a section and COMDAT group of its own.
//!
//! Written here rather than with the `object` crate: its writer brought indexmap, two
//! hashbrowns, foldhash, equivalent and crc32fast into every user's build, nine units and
//! about 2.5 s of CPU on a first build, for a file with no code, no relocations and one
//! shape (BENCHMARKS.md, "A user's first build"). The layout is what `object` wrote and GNU
//! ld and lld accept (the tests link it with GNU ld):
//!
//! ```text
//! [0] null  [1] .group  [2] .rodata.<sym>  ... (a group before its member, per image)
//! .note.GNU-stack  .symtab  .strtab  .shstrtab
//! ```

/// The machines an image object is written for: what CUDA runs on (x86-64, and Grace and
/// Jetson's aarch64), whose relocatable objects need no ABI flags in the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machine {
    X86_64,
    Aarch64,
}

impl Machine {
    fn e_machine(self) -> u16 {
        match self {
            Machine::X86_64 => 62,   // EM_X86_64
            Machine::Aarch64 => 183, // EM_AARCH64
        }
    }
}

const SHT_PROGBITS: u32 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHT_GROUP: u32 = 17;
const SHF_ALLOC: u64 = 0x2;
const SHF_GROUP: u64 = 0x200;
const GRP_COMDAT: u32 = 1;
const STB_GLOBAL_STT_OBJECT: u8 = (1 << 4) | 1;
const STV_HIDDEN: u8 = 2;
/// From this many sections on, the header's counts move elsewhere (`SHN_LORESERVE`).
const MAX_SECTIONS: usize = 0xff00;
/// 64: more than a cubin's ELF header asks of the driver's loader, and a cache line.
const IMAGE_ALIGN: u64 = 64;

/// One section header, as written at the end of the file.
#[derive(Default)]
struct Section {
    name: u32,
    kind: u32,
    flags: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

/// The object defining each of `images` (symbol name and bytes; names are unique) as a
/// global, hidden (linker-visible, never exported from a cdylib) data symbol. Each image is a
/// COMDAT group of its own, so two crates embedding the same image share one copy, and a
/// binary that names no image of an object drops it (`--gc-sections`).
pub fn relocatable(machine: Machine, images: &[(&str, &[u8])]) -> Result<Vec<u8>, String> {
    // Per image a group and its data; then the note, the symbol table and two string tables.
    let count = 2 * images.len() + 5;
    if count >= MAX_SECTIONS {
        return Err(format!("{} images are more than one ELF object of this kind holds", images.len()));
    }
    let (symtab, strtab, shstrtab) = (count - 3, count - 2, count - 1);
    let mut names = StringTable::default(); // section names
    let mut symbol_names = StringTable::default();
    let mut out = vec![0u8; 64]; // the header, filled in last
                                 // The images with their padding, group words and symbols: one allocation for megabytes of PTX.
    out.reserve(images.iter().map(|(name, bytes)| bytes.len() + 2 * name.len() + 128).sum());
    let mut sections = vec![Section::default()];
    let group_name = names.add(".group");
    for (i, (name, bytes)) in images.iter().enumerate() {
        let data_index = sections.len() as u32 + 1;
        // The group: its flag word and its one member; its symbol is the image's (sh_info).
        let offset = pad(&mut out, 4);
        out.extend(GRP_COMDAT.to_le_bytes());
        out.extend(data_index.to_le_bytes());
        let (link, info) = (symtab as u32, i as u32 + 1);
        sections.push(Section { link, info, entsize: 4, ..Section::new(group_name, SHT_GROUP, offset, 8, 4) });
        let offset = pad(&mut out, IMAGE_ALIGN);
        out.extend_from_slice(bytes);
        let name = names.add(&format!(".rodata.{name}"));
        // A COMDAT group's member must say so: GNU ld refuses the whole file otherwise (lld does not).
        let flags = SHF_ALLOC | SHF_GROUP;
        sections.push(Section { flags, ..Section::new(name, SHT_PROGBITS, offset, bytes.len() as u64, IMAGE_ALIGN) });
    }
    // What assemblers write: the object needs no executable stack (GNU ld warns otherwise).
    let offset = out.len() as u64;
    sections.push(Section::new(names.add(".note.GNU-stack"), SHT_PROGBITS, offset, 0, 1));

    // The symbols: the null one, then every image's (all global: the first global is 1).
    let offset = pad(&mut out, 8);
    out.extend([0u8; 24]);
    for (i, (name, bytes)) in images.iter().enumerate() {
        out.extend(symbol_names.add(name).to_le_bytes()); // st_name
        out.push(STB_GLOBAL_STT_OBJECT); // st_info
        out.push(STV_HIDDEN); // st_other
        out.extend((2 * i as u16 + 2).to_le_bytes()); // st_shndx: the image's data section
        out.extend(0u64.to_le_bytes()); // st_value
        out.extend((bytes.len() as u64).to_le_bytes()); // st_size
    }
    let size = out.len() as u64 - offset;
    let (symtab_name, strtab_name, shstrtab_name) = (names.add(".symtab"), names.add(".strtab"), names.add(".shstrtab"));
    let symtab_section = Section::new(symtab_name, SHT_SYMTAB, offset, size, 8);
    sections.push(Section { link: strtab as u32, info: 1, entsize: 24, ..symtab_section });
    for (table, name) in [(&symbol_names, strtab_name), (&names, shstrtab_name)] {
        let offset = out.len() as u64;
        out.extend_from_slice(&table.bytes);
        sections.push(Section::new(name, SHT_STRTAB, offset, table.bytes.len() as u64, 1));
    }
    debug_assert_eq!(sections.len(), count);

    let headers = pad(&mut out, 8);
    for s in &sections {
        out.extend(s.name.to_le_bytes());
        out.extend(s.kind.to_le_bytes());
        out.extend(s.flags.to_le_bytes());
        out.extend(0u64.to_le_bytes()); // sh_addr
        out.extend(s.offset.to_le_bytes());
        out.extend(s.size.to_le_bytes());
        out.extend(s.link.to_le_bytes());
        out.extend(s.info.to_le_bytes());
        out.extend(s.align.to_le_bytes());
        out.extend(s.entsize.to_le_bytes());
    }

    let mut header = Vec::with_capacity(64);
    header.extend(b"\x7fELF");
    header.extend([2, 1, 1, 0]); // ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_NONE
    header.extend([0u8; 8]);
    header.extend(1u16.to_le_bytes()); // ET_REL
    header.extend(machine.e_machine().to_le_bytes());
    header.extend(1u32.to_le_bytes()); // e_version
    header.extend(0u64.to_le_bytes()); // e_entry
    header.extend(0u64.to_le_bytes()); // e_phoff
    header.extend(headers.to_le_bytes()); // e_shoff
    header.extend(0u32.to_le_bytes()); // e_flags
    header.extend(64u16.to_le_bytes()); // e_ehsize
    header.extend(0u16.to_le_bytes()); // e_phentsize
    header.extend(0u16.to_le_bytes()); // e_phnum
    header.extend(64u16.to_le_bytes()); // e_shentsize
    header.extend((count as u16).to_le_bytes()); // e_shnum
    header.extend((shstrtab as u16).to_le_bytes()); // e_shstrndx
    out[..64].copy_from_slice(&header);
    Ok(out)
}

impl Section {
    /// A section of `kind` whose bytes lie at `offset`, `size` long.
    fn new(name: u32, kind: u32, offset: u64, size: u64, align: u64) -> Section {
        Section { name, kind, offset, size, align, ..Section::default() }
    }
}

/// Zeros up to the next multiple of `align`; the offset reached.
fn pad(out: &mut Vec<u8>, align: u64) -> u64 {
    let len = (out.len() as u64).next_multiple_of(align);
    out.resize(len as usize, 0);
    len
}

/// An ELF string table: a leading NUL, then each name and its NUL.
struct StringTable {
    bytes: Vec<u8>,
}

impl Default for StringTable {
    fn default() -> Self {
        StringTable { bytes: vec![0] }
    }
}

impl StringTable {
    fn add(&mut self, name: &str) -> u32 {
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object, ObjectComdat, ObjectSection, ObjectSymbol, SectionFlags, SymbolScope};

    const A: &str = "__ptx_build_aaaa";
    const B: &str = "__ptx_build_bbbb";

    #[test]
    fn each_image_is_a_hidden_global_symbol_in_an_aligned_section_and_comdat_group_of_its_own() {
        let (ptx, cubin) = (b".version 8.0\n.target sm_80\n".as_slice(), [0x7fu8, b'E', b'L', b'F', 2, 1, 1].as_slice());
        for (machine, arch) in [(Machine::X86_64, object::Architecture::X86_64), (Machine::Aarch64, object::Architecture::Aarch64)] {
            let bytes = relocatable(machine, &[(A, ptx), (B, cubin)]).unwrap();
            let file = object::File::parse(bytes.as_slice()).unwrap();
            assert_eq!((file.architecture(), file.kind()), (arch, object::ObjectKind::Relocatable));
            for (name, data) in [(A, ptx), (B, cubin)] {
                let symbol = file.symbol_by_name(name).unwrap();
                assert_eq!(
                    (symbol.size(), symbol.scope(), symbol.is_global(), symbol.kind()),
                    (data.len() as u64, SymbolScope::Linkage, true, object::SymbolKind::Data)
                );
                let section = file.section_by_index(symbol.section_index().unwrap()).unwrap();
                assert_eq!(section.name().unwrap(), format!(".rodata.{name}"));
                assert_eq!((section.data().unwrap(), section.align()), (data, 64));
                assert_eq!(section.file_range().unwrap().0 % 64, 0, "the bytes lie aligned in the file too");
                let SectionFlags::Elf { sh_flags } = section.flags() else { panic!() };
                assert_eq!(sh_flags, SHF_ALLOC | SHF_GROUP);
                let group = file.comdats().find(|c| c.name().unwrap() == name).unwrap();
                assert_eq!(group.kind(), object::ComdatKind::Any);
                assert_eq!(group.sections().collect::<Vec<_>>(), [section.index()]);
            }
            assert!(file.section_by_name(".note.GNU-stack").is_some());
        }
        // No image: a valid, empty object.
        let empty = relocatable(Machine::X86_64, &[]).unwrap();
        assert_eq!(object::File::parse(empty.as_slice()).unwrap().symbols().count(), 0);
    }

    #[test]
    fn more_images_than_an_object_has_section_numbers_for_is_an_error_not_a_corrupt_file() {
        let names: Vec<String> = (0..32_638).map(|i| format!("__ptx_build_{i}")).collect();
        let images: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), b"".as_slice())).collect();
        // 2 * 32,637 + 5 sections: the last count the header holds.
        let most = relocatable(Machine::X86_64, &images[..32_637]).map(|b| object::File::parse(b.as_slice()).unwrap().symbols().count());
        assert_eq!(most, Ok(32_637));
        let e = relocatable(Machine::X86_64, &images).map(|b| b.len());
        assert_eq!(e, Err("32638 images are more than one ELF object of this kind holds".to_string()));
    }

    /// What a host binary's link does with two crates' objects that share an image: GNU ld
    /// (the strictest of the linkers about groups) keeps one copy, and the bytes are there.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn gnu_ld_links_two_objects_sharing_an_image_into_a_program_that_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let shared: Vec<u8> = (0..200u8).collect();
        let other = b"only in the second".as_slice();
        std::fs::write(dir.path().join("a.o"), relocatable(Machine::X86_64, &[(A, &shared)]).unwrap()).unwrap();
        std::fs::write(dir.path().join("b.o"), relocatable(Machine::X86_64, &[(A, &shared), (B, other)]).unwrap()).unwrap();
        std::fs::write(
            dir.path().join("main.c"),
            format!(
                "extern const unsigned char {A}[200], {B}[18];\n\
                 int main(void) {{ return {A}[199] == 199 && {B}[0] == 'o' && {B}[17] == 'd' ? 0 : 1; }}\n"
            ),
        )
        .unwrap();
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let link = std::process::Command::new(&cc)
            .current_dir(dir.path())
            .args(["-fuse-ld=bfd", "-Wl,--fatal-warnings", "main.c", "a.o", "b.o", "-o", "prog"])
            .output()
            .unwrap_or_else(|e| panic!("this test links with `{cc}` (a C compiler and binutils' GNU ld): {e}"));
        assert!(link.status.success(), "{}", String::from_utf8_lossy(&link.stderr));
        let run = std::process::Command::new(dir.path().join("prog")).status().unwrap();
        assert!(run.success(), "the program read other bytes than the images'");
        // One copy of the shared image.
        let prog = std::fs::read(dir.path().join("prog")).unwrap();
        assert_eq!(prog.windows(shared.len()).filter(|w| *w == shared.as_slice()).count(), 1);
    }
}
