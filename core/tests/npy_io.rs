//! `.npy` reading and writing. numpy is not available where these tests run, so the
//! fixtures are built byte by byte from the format specification
//! (numpy/lib/format.py): magic `\x93NUMPY`, major and minor version, header length
//! (u16 for 1.0, u32 for 2.0 and 3.0), a Python dict literal padded with spaces and a
//! final newline to a multiple of 64 bytes, then the raw data.

use proptest::prelude::*;
use tilescope::npy::{self, NpyError};
use tilescope::tensor::Tensor;
use tilescope::types::DType;

fn handcraft(major: u8, descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let fortran = if fortran { "True" } else { "False" };
    let mut text =
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}");
    let prefix = if major == 1 { 10 } else { 12 };
    while (prefix + text.len() + 1) % 64 != 0 {
        text.push(' ');
    }
    text.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([major, 0]);
    if major == 1 {
        out.extend((text.len() as u16).to_le_bytes());
    } else {
        out.extend((text.len() as u32).to_le_bytes());
    }
    out.extend(text.as_bytes());
    out.extend(data);
    out
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn reads_handcrafted_files_of_every_version() {
    let data = f32_bytes(&[1.0, -2.0, 0.5, 3.25, 0.0, -0.0]);
    for major in [1, 2, 3] {
        let t = npy::read(&handcraft(major, "<f4", false, "(2, 3)", &data)).expect("valid file");
        assert_eq!(t.dtype, DType::F32);
        assert_eq!(t.shape, [2, 3]);
        assert_eq!(t.to_f32_vec(), [1.0, -2.0, 0.5, 3.25, 0.0, -0.0]);
    }
}

#[test]
fn reads_each_supported_dtype() {
    let f16 = handcraft(1, "<f2", false, "(2,)", &[0x00, 0x3C, 0x00, 0xC0]); // 1.0, -2.0
    let t = npy::read(&f16).expect("f16");
    assert_eq!((t.dtype, t.to_f32_vec()), (DType::F16, vec![1.0, -2.0]));
    let i32s: Vec<u8> = [7i32, -1].iter().flat_map(|x| x.to_le_bytes()).collect();
    let t = npy::read(&handcraft(1, "<i4", false, "(2, 1)", &i32s)).expect("i32");
    assert_eq!(
        (t.dtype, t.shape.clone(), t.get_i32(0), t.get_i32(1)),
        (DType::I32, vec![2, 1], 7, -1)
    );
    // bf16 as uint16 bits: 0x3F80 = 1.0, 0xC040 = -3.0
    let t = npy::read(&handcraft(
        2,
        "<u2",
        false,
        "(2,)",
        &[0x80, 0x3F, 0x40, 0xC0],
    ))
    .expect("bf16 bits");
    assert_eq!((t.dtype, t.to_f32_vec()), (DType::BF16, vec![1.0, -3.0]));
    // 8-bit integers: 0xFF is -1 as i8 and 255 as u8.
    let t = npy::read(&handcraft(1, "|i1", false, "(2,)", &[0xFF, 0x7F])).expect("i8");
    assert_eq!((t.dtype, t.get_i32(0), t.get_i32(1)), (DType::I8, -1, 127));
    let t = npy::read(&handcraft(1, "|u1", false, "(2,)", &[0xFF, 0x7F])).expect("u8");
    assert_eq!((t.dtype, t.get_i32(0), t.get_i32(1)), (DType::U8, 255, 127));
    // A Fortran-ordered array with one non-unit axis has the same bytes as C order.
    let t = npy::read(&handcraft(
        1,
        "<f4",
        true,
        "(1, 2)",
        &f32_bytes(&[4.0, 5.0]),
    ))
    .expect("trivial F order");
    assert_eq!(t.to_f32_vec(), [4.0, 5.0]);
}

#[test]
fn round_trips_every_dtype() {
    let values = [0.0, 1.0, -2.5, 0.333, 1e-3, -7.0];
    let all = [
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I32,
        DType::I8,
        DType::U8,
    ];
    for dtype in all {
        let t = Tensor::from_f32(dtype, vec![3, 2], &values);
        let bytes = npy::write(&t);
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{dtype}");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!(
            (10 + header_len) % 64,
            0,
            "{dtype}: header is padded to 64 bytes"
        );
        let text = std::str::from_utf8(&bytes[10..10 + header_len]).expect("ascii header");
        let descr = ["<f4", "<f2", "<u2", "<i4", "|i1", "|u1"]
            [all.iter().position(|&d| d == dtype).unwrap_or(0)];
        assert!(
            text.contains(descr) && text.contains("'shape': (3, 2") && text.contains("False"),
            "{text}"
        );
        assert_eq!(npy::read(&bytes), Ok(t), "{dtype}");
    }
}

#[test]
fn writes_what_a_handcrafted_file_holds() {
    let data = f32_bytes(&[1.0, 2.0, 3.0]);
    let handmade = npy::read(&handcraft(2, "<f4", false, "(3,)", &data)).expect("valid");
    let again = npy::read(&npy::write(&handmade)).expect("valid");
    assert_eq!(again, handmade);
    assert_eq!(again.data, data);
}

#[test]
fn rejects_what_it_cannot_represent() {
    let data = f32_bytes(&[1.0, 2.0, 3.0, 4.0]);
    let big = npy::read(&handcraft(1, ">f4", false, "(4,)", &data));
    assert!(matches!(big, Err(NpyError::BigEndian(_))), "{big:?}");
    let fortran = npy::read(&handcraft(1, "<f4", true, "(2, 2)", &data));
    assert_eq!(fortran, Err(NpyError::FortranOrder));
    for descr in ["<f8", "<i8", "<u4", "|b1"] {
        let r = npy::read(&handcraft(1, descr, false, "(1,)", &data));
        assert!(
            matches!(r, Err(NpyError::UnsupportedDType(_))),
            "{descr}: {r:?}"
        );
    }
    let short = npy::read(&handcraft(1, "<f4", false, "(5,)", &data));
    assert!(
        matches!(
            short,
            Err(NpyError::WrongLength {
                expected: 20,
                found: 16,
                ..
            })
        ),
        "{short:?}"
    );
    let long = npy::read(&handcraft(1, "<f4", false, "(3,)", &data));
    assert!(
        matches!(long, Err(NpyError::WrongLength { .. })),
        "{long:?}"
    );
    let huge = npy::read(&handcraft(
        1,
        "<f4",
        false,
        "(4294967296, 4294967296)",
        &data,
    ));
    assert!(
        matches!(huge, Err(NpyError::WrongLength { .. })),
        "{huge:?}"
    );
    for junk in [
        &b""[..],
        b"\x93NUMPY",
        b"PK\x03\x04 not an npy file",
        b"\x93NUMPY\x09\x00\x10\x00{}",
    ] {
        assert!(
            matches!(npy::read(junk), Err(NpyError::Malformed(_))),
            "{junk:?}"
        );
    }
    // A header length far past the file, and nesting meant to exhaust the stack.
    let claims_4gib = b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}";
    assert!(matches!(
        npy::read(claims_4gib),
        Err(NpyError::Malformed(_))
    ));
    let nested = handcraft(1, "<f4", false, &"(".repeat(5000), &data);
    assert!(matches!(npy::read(&nested), Err(NpyError::Malformed(_))));
    let negative = npy::read(&handcraft(1, "<f4", false, "(-4,)", &data));
    assert!(
        matches!(negative, Err(NpyError::Malformed(_))),
        "{negative:?}"
    );
    let err = npy::read(&handcraft(1, "<f8", false, "(1,)", &data)).expect_err("f8");
    assert!(
        err.to_string().contains("<f8") && err.to_string().contains("<f4"),
        "{err}"
    );
}

proptest! {
    #[test]
    fn any_bytes_read_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut file = b"\x93NUMPY\x01\x00".to_vec();
        file.extend(&bytes);
        let _ = npy::read(&file);
        let _ = npy::read(&bytes);
    }

    #[test]
    fn f32_bits_round_trip(bits in proptest::collection::vec(any::<u32>(), 0..64), rows in 1u64..4) {
        let cols = bits.len() as u64 / rows;
        let data: Vec<u8> = bits.iter().take((rows * cols) as usize).flat_map(|b| b.to_le_bytes()).collect();
        let t = Tensor { dtype: DType::F32, shape: vec![rows, cols], data };
        prop_assert_eq!(npy::read(&npy::write(&t)), Ok(t));
    }
}
